"""The catalogue doctor: each kind of finding on a small hand-made catalogue, JSON, the CLI."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from toolsurface import Tool, ToolRegistry
from toolsurface.cli import main
from toolsurface.doctor import (
    NAME_RULES,
    DoctorReport,
    description_issues,
    diagnose,
    format_report,
    name_issue,
)

LONG_NAME = "svc__" + "x" * 60  # 65 characters: over OpenAI's and Gemini's 64
LONG_SENTENCE = "Runs " + "a very long and winding clause " * 11 + "to the end."

TOOLS = [
    # Four tools whose names say what the fifth's first sentence says: it loses its own query.
    Tool(name="github__list_pull_requests", description="Lists pull requests in a repository."),
    Tool(name="gitlab__list_pull_requests", description="Lists merge requests of a project."),
    Tool(name="gitea__list_pull_requests", description="Lists pull requests on a Gitea host."),
    Tool(name="forgejo__list_pull_requests", description="Lists pull requests on Forgejo."),
    Tool(name="misc__helper", description="Lists pull requests."),
    # Two tools that say the same thing: each other's rival.
    Tool(name="mailer__send_mail", description="Send an email message to a recipient."),
    Tool(name="postbox__send_mail", description="Send an email message to a recipient."),
    # Description problems.
    Tool(name="vault__read_secret", description=""),
    Tool(name="git__checkout", description="Switches branches"),
    Tool(name="reports__build", description="Builds a report (see the docs. More text here."),
    Tool(name="notion__get_user", description="Notion | Retrieve a user"),
    Tool(name="essay__write", description=LONG_SENTENCE),
    # Names the providers refuse.
    Tool(name="fs.read_file", description="Read a file from the local disk."),
    Tool(name=LONG_NAME, description="Do a thing with a very long name."),
    Tool(name="1password__get_item", description="Fetch an item from a password vault."),
    # Found, sound and well named: no finding.
    Tool(name="calendar__create_event", description="Create a calendar event or meeting."),
]


@pytest.fixture
def registry(engine_name: str) -> ToolRegistry:
    return ToolRegistry(TOOLS, engine=engine_name)  # type: ignore[arg-type]


@pytest.fixture
def report(registry: ToolRegistry) -> DoctorReport:
    return diagnose(registry, k=3, catalogue="hand-made")


def test_tool_its_own_summary_does_not_find(report: DoctorReport) -> None:
    by_summary = {u.name: u for u in report.unfound if u.query_kind == "summary"}
    assert set(by_summary) == {"misc__helper"}
    miss = by_summary["misc__helper"]
    assert miss.query == "Lists pull requests."
    assert miss.rank is not None
    assert miss.rank > 3
    assert len(miss.above) == 3
    assert all(name.endswith("__list_pull_requests") for name in miss.above)


def test_harder_query_drops_the_name_words(registry: ToolRegistry) -> None:
    tools = [
        Tool(name="tickets__archive", description="Archive a closed support ticket for good."),
        Tool(name="support__close", description="Close a support ticket for good."),
        Tool(name="support__reopen", description="Reopen a closed support ticket."),
    ]
    reg = ToolRegistry(tools, engine=registry.engine)
    rep = diagnose(reg, k=1)
    hard = {u.name: u for u in rep.unfound if u.query_kind == "summary_without_name"}
    assert "tickets__archive" in hard
    assert hard["tickets__archive"].query == "a closed support for good."
    assert rep.hard_queries >= 1


def test_near_duplicate_pair(report: DoctorReport) -> None:
    pairs = {(p.a, p.b): p for p in report.duplicates}
    pair = pairs[("mailer__send_mail", "postbox__send_mail")]
    assert pair.similarity == pytest.approx(1.0)
    assert pair.term_overlap == pytest.approx(1.0)
    assert pair.mutual_top2
    assert pair.score_ratio is not None
    assert pair.score_ratio > 0.9
    assert all(p.similarity >= 0.9 for p in report.duplicates)
    assert ("calendar__create_event", "mailer__send_mail") not in pairs


def test_a_pair_the_index_tells_apart_is_no_duplicate(engine_name: str) -> None:
    # One verb apart, nearly every summary term shared, but each tool is first for its own
    # summary: the index separates them, so they do not compete.
    text = "a Kubernetes resource in the current cluster by its apiVersion, kind and name."
    tools = [
        Tool(name="k8s__resources_delete", description=f"Delete {text}"),
        Tool(name="k8s__resources_get", description=f"Get {text}"),
        Tool(name="mailer__send_mail", description="Send an email message to a recipient."),
        Tool(name="postbox__send_mail", description="Send an email message to a recipient."),
    ]
    rep = diagnose(ToolRegistry(tools, engine=engine_name), k=3)  # type: ignore[arg-type]
    pairs = {(p.a, p.b) for p in rep.duplicates}
    assert pairs == {("mailer__send_mail", "postbox__send_mail")}


def test_description_problems(report: DoctorReport) -> None:
    found = {(d.name, d.issue) for d in report.descriptions}
    assert ("vault__read_secret", "empty") in found
    assert ("git__checkout", "too_short") in found
    assert ("reports__build", "open_bracket") in found
    assert ("notion__get_user", "title_like") in found
    assert ("essay__write", "too_long") in found
    named = {name for name, _ in found}
    assert "calendar__create_event" not in named
    assert "misc__helper" not in named


@pytest.mark.parametrize(
    ("summary", "issues"),
    [
        ("Create a calendar event or meeting.", []),
        ("Get current time in a specific timezone", []),
        ("Pull Request Details", ["title_like"]),
        ("# Search Tool", ["too_short", "title_like"]),
        ("Jira :: Create an issue.", ["title_like"]),
        ("Move an issue (e.g. to Done).", []),
        # A terminal escape is reported as such, and its '[' is not an open bracket.
        ("Reads files \x1b]0;pwned\x07\x1b[31mRED\x1b[0m and more.", ["control_chars"]),
        ("Deletes a file\u202e quietly.", ["control_chars"]),
    ],
)
def test_description_heuristics(summary: str, issues: list[str]) -> None:
    assert [d.issue for d in description_issues("t", summary)] == issues


def test_names_refused_by_providers(report: DoctorReport) -> None:
    refused = {n.name: set(n.refused_by) for n in report.names}
    assert refused["fs.read_file"] == {"openai", "anthropic"}
    assert refused[LONG_NAME] == {"openai", "gemini"}
    assert refused["1password__get_item"] == {"gemini"}
    assert "calendar__create_event" not in refused
    assert name_issue("a" * 64) is None
    assert name_issue("a" * 129) is not None
    assert {rule.provider for rule in NAME_RULES} == {"openai", "anthropic", "gemini"}


def test_json_shape(report: DoctorReport) -> None:
    data = json.loads(json.dumps(report.as_dict()))
    assert set(data) >= {
        "catalogue",
        "engine",
        "tools",
        "k",
        "counts",
        "unfound",
        "duplicates",
        "descriptions",
        "names",
        "name_rules",
    }
    assert data["tools"] == len(TOOLS)
    assert data["k"] == 3
    counts = data["counts"]
    assert counts["unfound_by_summary"] == 1
    assert counts["duplicate_pairs"] == len(data["duplicates"]) >= 1
    assert counts["description_issues"]["empty"] == 1
    assert counts["refused_names"] == {"openai": 2, "anthropic": 1, "gemini": 2}
    assert set(data["unfound"][0]) == {"name", "query_kind", "query", "rank", "above"}
    assert set(data["duplicates"][0]) == {
        "a",
        "b",
        "similarity",
        "score_ratio",
        "term_overlap",
        "mutual_top2",
    }
    assert set(data["descriptions"][0]) == {"name", "issue", "summary", "detail"}
    assert set(data["names"][0]) == {"name", "length", "refused_by"}


def test_text_report_has_every_section(report: DoctorReport) -> None:
    text = format_report(report, limit=2)
    for heading in (
        "Not found in the first 3",
        "Near-duplicate pairs",
        "Description problems: 5",
        "Names a provider refuses: 3 tools (openai 2, anthropic 1, gemini 2)",
    ):
        assert heading in text
    assert "more (--limit 0 or --json for all)" in text


def test_k_must_be_positive(registry: ToolRegistry) -> None:
    with pytest.raises(ValueError, match="k must be"):
        diagnose(registry, k=0)


def _write_catalogue(tmp_path: Path) -> Path:
    items: list[dict[str, Any]] = [
        {"name": t.name, "description": t.description, "inputSchema": t.input_schema} for t in TOOLS
    ]
    path = tmp_path / "tools.json"
    path.write_text(json.dumps({"tools": items}), encoding="utf-8")
    return path


def test_cli_reports_with_exit_0(
    tmp_path: Path, engine_name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _write_catalogue(tmp_path)
    assert main(["doctor", "--catalogue", str(path), "--json", "--engine", engine_name]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["engine"] == engine_name
    assert data["counts"]["unfound_by_summary"] == 1
    assert data["seconds"] >= 0
    assert main(["doctor", "--catalogue", str(path), "-k", "2"]) == 0
    assert "Names a provider refuses" in capsys.readouterr().out


def test_cli_demo_catalogue(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["doctor"]) == 0
    assert "in demo catalogue" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("content", "message"),
    [(None, "No such file"), ("{not json", "not JSON"), ('{"tools": [{"x": 1}]}', "no 'name'")],
)
def test_cli_bad_input_exits_2(
    tmp_path: Path, content: str | None, message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "bad.json"
    if content is not None:
        path.write_text(content, encoding="utf-8")
    assert main(["doctor", "--catalogue", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("toolsurface: error:")
    assert message in err


def test_cli_bad_k_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    for argv in (["doctor", "-k", "0"], ["search", "x", "-k", "0"], ["doctor", "--limit", "-1"]):
        with pytest.raises(SystemExit) as stop:
            main(argv)
        assert stop.value.code == 2
        err = capsys.readouterr().err
        assert f"argument {argv[-2]}: must be at least" in err, err
