"""``RequestPlan.render(provider)`` is typed with the providers' own request types.

Statically: a small host file, type-checked by mypy against this package, passes each
rendered payload to the SDK's own parameter types and client methods, and a wrong use is
caught (the payload is no ``Any``). At run time: every shape a plan renders (append and
native delivery) validates as exactly the SDK type the overload names.
"""

from __future__ import annotations

import shutil
import site
import sysconfig
import textwrap
import typing
from pathlib import Path
from typing import Any

import pydantic
import pytest

import toolsurface
from toolsurface import Tool, ToolRegistry, ToolSurface, tool_search_tool
from toolsurface.providers.payloads import GeminiFunctionDeclaration, GeminiTool
from toolsurface.surface.plan import RequestPlan

#: The checkout: its mypy cache seeds the typing check's.
ROOT = Path(__file__).resolve().parents[2]

anthropic_types = pytest.importorskip("anthropic.types", reason="the anthropic SDK is a test dep")
openai_chat = pytest.importorskip("openai.types.chat", reason="the openai SDK is a test dep")
openai_responses = pytest.importorskip("openai.types.responses", reason="the openai SDK")
genai_types = pytest.importorskip("google.genai.types", reason="google-genai is a test dep")

#: The type each overload of ``render`` names, as pydantic validates it.
SDK_TYPES: dict[str, Any] = {
    "anthropic": list[anthropic_types.ToolParam],  # type: ignore[name-defined]
    "openai": list[openai_chat.ChatCompletionToolParam],  # type: ignore[name-defined]
    "openai-responses": list[openai_responses.ToolParam],  # type: ignore[name-defined]
}


def _registry() -> ToolRegistry:
    schema = {"type": "object", "properties": {"repo": {"type": "string"}}, "required": ["repo"]}
    reg = ToolRegistry(engine="pure")
    reg.register_many(
        [
            Tool(name="read_file", description="Read a file.", input_schema=schema),
            Tool(name="ping", description="Takes nothing."),
            Tool(name="gh__list_issues", description="List issues.", input_schema=schema),
            Tool(name="gh__create_issue", description="Create an issue.", input_schema=schema),
            Tool(name="docs.search", description="A name OpenAI refuses.", group="docs"),
            tool_search_tool(),
        ]
    )
    reg.declare_group("gh", prefix="gh__", dynamic=True, description="GitHub issues")
    reg.declare_group("docs", dynamic=True)
    return reg


def _plans(provider: str) -> list[RequestPlan]:
    """The provider's plans: append, and native (before and after a load) where it has one."""
    plans = [ToolSurface(_registry(), provider=provider).plan()]
    if provider in ("anthropic", "openai-responses"):
        surface = ToolSurface(_registry(), provider=provider, delivery="native")
        plans.append(surface.plan())
        surface.tool_search({"query": "list issues"})
        plans.append(surface.plan())
    return plans


@pytest.mark.parametrize("provider", sorted(SDK_TYPES))
def test_every_rendered_shape_is_the_sdk_type_the_overload_names(provider: str) -> None:
    adapter = pydantic.TypeAdapter(SDK_TYPES[provider])
    kinds = set()
    for plan in _plans(provider):
        rendered = plan.render(provider)  # type: ignore[call-overload]
        adapter.validate_python(rendered, strict=False)  # raises on a shape the SDK refuses
        kinds |= {(t.get("type"), "defer_loading" in t) for t in rendered}
    if provider == "openai-responses":  # namespaces and the client tool_search, not only functions
        assert {("namespace", False), ("tool_search", False), ("function", False)} <= kinds
    if provider == "anthropic":
        assert (None, True) in kinds  # deferred tools


def test_the_gemini_payload_has_the_typed_keys_and_the_sdk_takes_it() -> None:
    (plan,) = _plans("gemini")
    rendered = plan.render("gemini")
    assert set(rendered) == GeminiTool.__required_keys__
    declarations = rendered["functionDeclarations"]
    assert all(set(d) == GeminiFunctionDeclaration.__required_keys__ for d in declarations)
    hints = typing.get_type_hints(GeminiFunctionDeclaration)
    assert hints["name"] is str and hints["description"] is str
    # The SDK reads the camelCase key into its own field, the schema unchanged.
    parsed = genai_types.Tool.model_validate(rendered).function_declarations
    assert parsed and [d.parameters_json_schema for d in parsed] == [
        d["parametersJsonSchema"] for d in declarations
    ]
    assert all(d.parameters is None for d in parsed)


def test_render_without_a_provider_is_still_the_runs_payload() -> None:
    plan = ToolSurface(_registry(), provider="anthropic").plan()
    assert plan.render() == plan.render("anthropic")


HOST = """
from anthropic import Anthropic
from anthropic.types import ToolParam
from google.genai import types as genai_types
from openai import OpenAI
from openai.types.chat import ChatCompletionToolParam
from openai.types.responses import ToolParam as ResponsesToolParam

from toolsurface import RequestPlan


def host(plan: RequestPlan, claude: Anthropic, gpt: OpenAI) -> None:
    a: list[ToolParam] = plan.render("anthropic")
    first: str = a[0]["name"]
    claude.messages.create(
        model="m", max_tokens=1, messages=[], tools=plan.render("anthropic")
    )
    c: list[ChatCompletionToolParam] = plan.render("openai")
    gpt.chat.completions.create(model="m", messages=[], tools=plan.render("openai"))
    r: list[ResponsesToolParam] = plan.render("openai-responses")
    gpt.responses.create(model="m", input="hi", tools=plan.render("openai-responses"))
    g = plan.render("gemini")
    name: str = g["functionDeclarations"][0]["name"]
    genai_types.Tool.model_validate(g)
    anything = plan.render()  # the run's provider: left open
"""

WRONG = """
from toolsurface import RequestPlan


def host(plan: RequestPlan) -> None:
    a: int = plan.render("anthropic")
    g: list[str] = plan.render("gemini")["functionDeclarations"]
    plan.render("gemini")["function_declarations"]
"""


def _mypy(tmp_path: Path, source: str, monkeypatch: pytest.MonkeyPatch) -> tuple[str, int]:
    api = pytest.importorskip("mypy.api", reason="mypy is a dev dependency")
    host = tmp_path / "host.py"
    host.write_text(textwrap.dedent(source))
    # This package as it stands here, ahead of any installed copy; an installed package (the
    # wheel CI tests) is found where it is installed, and mypy refuses site-packages on MYPYPATH.
    source = Path(toolsurface.__file__).resolve().parents[1]
    installed = {
        Path(p).resolve() for p in (sysconfig.get_paths()["purelib"], *site.getsitepackages())
    }
    if source not in installed:
        monkeypatch.setenv("MYPYPATH", str(source))
    # A copy of the checkout's own mypy cache (the lint's, same options), when there is one:
    # the SDKs' modules are then read from it (26 s of mypy cold, 5 s warm). mypy checks
    # each entry against its source, so a stale one is checked again, never trusted.
    cache = tmp_path / ".mypy_cache"
    if not cache.exists() and (ROOT / ".mypy_cache").is_dir():
        shutil.copytree(ROOT / ".mypy_cache", cache)
    out, err, status = api.run(
        [
            "--strict",
            "--no-error-summary",
            "--python-version",
            "3.10",
            "--cache-dir",
            str(cache),
            str(host),
        ]
    )
    return out + err, status


@pytest.mark.slow
@pytest.mark.engine_agnostic  # static typing: the live engine changes nothing it reads
def test_mypy_sees_the_sdk_types(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    said, status = _mypy(tmp_path, HOST, monkeypatch)
    assert status == 0, said
    said, status = _mypy(tmp_path, WRONG, monkeypatch)
    lines = [line for line in said.splitlines() if "host.py" in line and " error: " in line]
    assert len(lines) == 3, said
    assert 'has type "list[ToolParam]", variable has type "int"' in lines[0]
    assert '"list[GeminiFunctionDeclaration]", variable has type "list[str]"' in lines[1]
    assert '"GeminiTool" has no key "function_declarations"' in lines[2]
