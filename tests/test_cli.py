"""The command line as a user runs it: search, eval, doctor and plan, and their errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import MCP_TOOLS
from toolsurface.cli import main


def _json(capsys: pytest.CaptureFixture[str], argv: list[str]) -> dict:  # type: ignore[type-arg]
    assert main(argv) == 0
    return json.loads(capsys.readouterr().out)  # type: ignore[no-any-return]


def test_search_demo_russian_pull_requests(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["search", "покажи открытые пулреквесты", "-k", "5"]) == 0
    out = capsys.readouterr().out
    first = out.splitlines()[1]
    assert "github__list_pull_requests" in first


def test_search_json_and_explain(capsys: pytest.CaptureFixture[str]) -> None:
    data = _json(capsys, ["search", "send a message to a slack channel", "--json", "--explain"])
    assert data["hits"][0]["name"].startswith("slack__")
    assert data["hits"][0]["explanation"]
    assert [h["rank"] for h in data["hits"]] == list(range(1, len(data["hits"]) + 1))


def test_search_real_catalogue(capsys: pytest.CaptureFixture[str]) -> None:
    if not MCP_TOOLS.exists():
        pytest.skip("shared data (../shared/data) is absent")
    data = _json(
        capsys,
        [
            "search",
            "--catalogue",
            str(MCP_TOOLS),
            "покажи открытые пулреквесты",
            "-k",
            "3",
            "--json",
        ],
    )
    assert "github__list_pull_requests" in [h["name"] for h in data["hits"]]


@pytest.mark.parametrize(
    ("content", "fragment"),
    [("{}", "without a 'tools' list"), ("[1]", "item 0 is not a tool definition")],
)
def test_wrong_file_exits_2_with_message(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str, fragment: str
) -> None:
    path = tmp_path / "bad.json"
    path.write_text(content, encoding="utf-8")
    assert main(["search", "x", "--catalogue", str(path)]) == 2
    err = capsys.readouterr().err
    assert "toolsurface: error:" in err and fragment in err and "expected" in err


def test_missing_file_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["search", "x", "--catalogue", "/nonexistent/tools.json"]) == 2
    assert "No such file" in capsys.readouterr().err


def test_eval_on_a_small_query_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    queries = tmp_path / "q.jsonl"
    rows = [
        {
            "id": "a",
            "query": "list pull requests",
            "lang": "en",
            "style": "model",
            "expected": ["github__list_pull_requests"],
        },
        {
            "id": "b",
            "query": "отправь сообщение в канал слака",
            "lang": "ru",
            "style": "user",
            "expected": ["slack__send_message"],
        },
    ]
    queries.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows), "utf-8")
    data = _json(capsys, ["eval", "--queries", str(queries), "--json"])
    assert data["metrics"]["all"]["queries"] == 2
    assert data["metrics"]["en/model"]["recall@1"] == 1.0
    assert set(data["metrics"]) >= {"all", "lang=en", "lang=ru", "style=user", "ru/user"}


def test_eval_of_server_records_is_the_same_in_one_array_or_a_line_each(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Server records get a group per server whichever way the file holds them; as JSON
    Lines they got none, and the same catalogue and requests scored lower."""
    from importlib.resources import files

    from toolsurface.catalogue import demo_catalogue, record_shape

    monkeypatch.setenv("TOOLSURFACE_SEMANTIC", "off")
    records = []
    for tool in demo_catalogue():
        server, name = tool.name.split("__", 1)
        records.append(
            {"server": server, "name": name, "description": tool.description}
            | {"input_schema": dict(tool.input_schema)}
        )
    array, lines = tmp_path / "tools.json", tmp_path / "tools.jsonl"
    array.write_text(json.dumps(records), "utf-8")
    lines.write_text("\n".join(json.dumps(r) for r in records) + "\n", "utf-8")
    one = tmp_path / "one.jsonl"  # a single record spread over lines, as JSON Lines parses it
    one.write_text(json.dumps(records[0], indent=2), "utf-8")
    assert record_shape(one) == "server-records"
    mixed = tmp_path / "mixed.jsonl"
    mixed.write_text(json.dumps(records[0]) + "\n" + json.dumps({"name": "x"}) + "\n", "utf-8")
    assert [record_shape(p) for p in (array, lines, mixed)] == [
        "server-records",
        "server-records",
        "jsonl",
    ]
    queries = str(files("toolsurface") / "data" / "demo_queries.jsonl")
    argv = ["eval", "--queries", queries, "--json", "--catalogue"]
    as_array = _json(capsys, [*argv, str(array)])["metrics"]
    as_lines = _json(capsys, [*argv, str(lines)])["metrics"]
    assert as_lines == as_array
    ungrouped = _json(capsys, [*argv, str(lines), "--no-server-groups"])["metrics"]
    assert ungrouped != as_lines  # the groups' mentions move the demo's rankings


def test_eval_refuses_an_expected_name_not_in_the_catalogue(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    queries = tmp_path / "q.jsonl"
    row = {"id": "a", "query": "list pull requests", "expected": ["github__list_pull_request"]}
    queries.write_text(json.dumps(row) + "\n", "utf-8")
    assert main(["eval", "--queries", str(queries)]) == 2
    err = capsys.readouterr().err
    assert f"{queries} line 1 (id 'a'): expected tool 'github__list_pull_request'" in err
    assert "nearest: github__list_pull_requests" in err


def test_plan_respects_the_provider(capsys: pytest.CaptureFixture[str]) -> None:
    data = _json(capsys, ["plan", "--provider", "openai", "--json"])
    assert len(data["tools"]) <= 128
    assert data["held_back"] and "<tool_catalogue>" in data["catalogue_block"]
    assert data["tools"][-1]["name"] == "ToolSearch"
    assert main(["plan", "--provider", "anthropic"]) == 0
    assert "catalogue block" in capsys.readouterr().out


def test_plan_counts_the_files_tools_and_names_a_clash_with_the_discovery_tool(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    one = {"name": "a__b", "description": "Read things.", "input_schema": {"type": "object"}}
    path = tmp_path / "one.json"
    path.write_text(json.dumps([one]), "utf-8")
    data = _json(capsys, ["plan", "--catalogue", str(path), "--json", "--no-semantic"])
    assert data["catalogue_tools"] == 1 and data["tools_registered"] == 2  # and ToolSearch
    clash = {**one, "name": "ToolSearch"}
    path.write_text(json.dumps([clash, one]), "utf-8")
    assert main(["plan", "--catalogue", str(path), "--no-semantic"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.endswith(
        "a tool named 'ToolSearch', the discovery tool's name: plan without it "
        "(--no-discovery), or rename the catalogue's tool"
    )
    assert main(["plan", "--catalogue", str(path), "--no-semantic", "--no-discovery"]) == 0


def test_search_output_carries_no_terminal_escapes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    evil = "Reads files \x1b]0;pwned\x07\x1b[31mRED\x1b[0m and more."
    path = tmp_path / "evil.json"
    path.write_text(json.dumps([{"name": "evil", "description": evil}]), encoding="utf-8")
    assert main(["search", "reads", "--catalogue", str(path)]) == 0
    out = capsys.readouterr().out
    assert "evil" in out and "RED" in out
    assert "\x1b" not in out and "\x07" not in out


def test_input_nested_past_the_parser_exits_2_without_a_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "deep.json"
    path.write_text("[" * 200_000 + "]" * 200_000, encoding="utf-8")
    assert main(["search", "x", "--catalogue", str(path)]) == 2
    err = capsys.readouterr().err
    assert "deep.json" in err and "nested too deeply" in err and "Traceback" not in err


@pytest.mark.parametrize("flag", ["--window", "--max-tools"])
def test_plan_refuses_a_zero_limit_naming_the_flag(
    flag: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as stop:
        main(["plan", flag, "0"])
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert f"argument {flag}: must be at least 1, got 0" in err and "pydantic" not in err


def test_an_engine_variable_of_no_engine_is_one_line_and_exit_2() -> None:
    # The variable is read at import: a fresh interpreter. Import itself never fails on it;
    # a command that searches says what is wrong in one line, and --help still helps.
    import os
    import subprocess
    import sys

    env = {**os.environ, "TOOLSURFACE_ENGINE": "bogus", "TOOLSURFACE_SEMANTIC": "off"}
    run = [sys.executable, "-m", "toolsurface.cli"]
    searched = subprocess.run(
        [*run, "search", "list PRs"], env=env, capture_output=True, text=True, timeout=120
    )
    assert searched.returncode == 2
    assert searched.stderr.strip().splitlines() == [
        "toolsurface: error: TOOLSURFACE_ENGINE='bogus': expected 'pure' or 'native' (or unset)"
    ]
    helped = subprocess.run(
        [*run, "search", "--help"], env=env, capture_output=True, text=True, timeout=120
    )
    assert helped.returncode == 0 and "TOOLSURFACE_ENGINE='bogus'" in helped.stdout
    chosen = subprocess.run(
        [*run, "search", "list PRs", "-k", "1", "--engine", "pure"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert chosen.returncode == 0 and "github__list_pull_requests" in chosen.stdout
