"""Turn public tool-retrieval sets into a catalogue and labelled requests in a local cache.

    python scripts/public_toolsets.py SET --source DIR [--commit SHA] [--out DIR]

``SET`` is ``toollens``, ``stabletoolbench``, ``mcptoolbench``, ``apibank``, ``sealtools``,
``toolalpaca``, ``toolalpaca_apis`` or ``restbench``. The data is read from where it was
fetched (``--source``: the set's GitHub repository, a work tree or a git directory without
one as the search tool's ``fetch`` gives, e.g. ``/work/.mirror/quchangle1+COLT/repo``; read
at ``--commit``, by default the one converted for docs/quality.md) and written outside the
repository (default ``~/.cache/toolsurface/public/<set>/``, or
``$TOOLSURFACE_PUBLIC_DATA/<set>/``): nothing it reads or writes is committed. The output
has the shapes ``toolsurface eval`` reads:

- ``catalogue.json``: server records, ``[{"server", "name", "description",
  "input_schema"}]``, so each tool is ``server__name``;
- ``queries.jsonl``: ``{"id", "query", "lang", "style", "expected"}`` per line, as
  ``../shared/data/queries/dev.jsonl``; ``style`` holds the set's own group;
- ``SOURCE.md``: repository, commit, paths, licence and counts, so a figure can be traced.

Sets (none of them is one of the held-out judges: Gorilla APIBench, LiveMCPBench, MetaTool)
-----------------------------------------------------------------------------------------
``toollens``: ToolLens (Qu et al., "Towards Completeness-Oriented Tool Retrieval for Large
Language Models", CIKM 2024, arXiv 2405.16089), GitHub ``quchangle1/COLT``,
``datasets/ToolLens/``: 464 RapidAPI tools (drawn from ToolBench) and LLM-written requests
that each need several tools, with BEIR relevance files; the test split (1,877 requests).
Licence: the repository has no licence file; its README releases the dataset for
research; the tools come from ToolBench (Apache-2.0). Each corpus entry
``category_name:…, tool_name:…, api_name:…, api_description:…, required_params: […],
optional_params: […], return_schema: …`` becomes a tool (``server`` the RapidAPI tool,
``name`` the API); category and return schema are dropped, as a host sees neither.

``stabletoolbench``: the solvable test queries of StableToolBench (Guo et al., 2024, arXiv
2403.07714; ToolBench's test sets re-checked for solvability), GitHub
``THUNLP-MT/StableToolBench``, ``solvable_queries/test_instruction/*.json``: 765 requests in
six groups (G1 instruction, category and tool; G2 instruction and category; G3
instruction). Each request lists the APIs offered to it and the relevant ones; the
catalogue is every offered API of the six groups pooled (as ToolBench's retriever
evaluation pools them), each request's ``expected`` its relevant APIs. Licence:
Apache-2.0 (the repository's LICENSE).

``mcptoolbench``: MCPToolBench++ (2025, a benchmark of MCP tool calls), GitHub
``AI-Agent-Hub/MCPToolBenchPP``, ``data/{browser,file_system,finance,search}/`` (the
single-call sets the snapshot holds; its map and pay sets are over the snapshot's file size
limit): requests over real MCP servers' tools, each labelled with the tool it calls; the
catalogue is every tool offered to any request, pooled; ``expected`` is the labelled tool
and the ones the set marks as equivalent (``similar_tools``, e.g. Puppeteer's click for
Playwright's). Licence: the repository has no licence file; evaluation only.

``apibank``: API-Bank (Li et al., EMNLP 2023, arXiv 2304.08244), GitHub
``AlibabaResearch/DAMO-ConvAI``, ``api-bank/``: the 53 API classes of ``apis/*.py`` (each
one's ``description`` and ``input_parameters``, read from the source as literals, never
run) and the 214 dialogues of ``lv1-lv2-samples/level-1-given-desc/``. A request per
dialogue: every user turn before its last call, joined (a user often asks for two things
in one turn); ``expected`` is every API it calls, any of which is a hit, as for the sets
above. ``GetUserToken``, called to log in before the asked-for call, is no request's answer
and is skipped (so are dialogues that call nothing else: 212 requests are left).
Licence: Apache-2.0 (``api-bank/LICENSE``).

``sealtools``: Seal-Tools (Wu et al., 2024, "Seal-Tools: Self-Instruct Tool Learning Dataset
for Agent Tuning and Detailed Benchmark", arXiv 2405.08355), GitHub
``fairyshine/Seal-Tools``, ``Seal-Tools_Dataset/``: the 4,076 LLM-written tools of
``tool.jsonl`` (``api_name``, ``api_description``, ``field`` such as ``Sports/Football``,
``parameters``, ``required``, ``responses``) and the requests of ``test_in_domain.jsonl``
(700) and ``test_out_domain.jsonl`` (654), 1,354 in all, each with the calls that answer it
(one to six). A tool's ``server`` is the first level of its field (146 of them), its name
the ``api_name`` in snake case (``getFilmDetails`` -> ``get_film_details``); the field's
second level and the responses are dropped, as a host sees neither. Calls name a tool by
``api_name`` alone: ``expected`` is every tool carrying a name the request calls, any of
which is a hit. At the commit converted no two tools share an ``api_name`` (a repeat would
get ``_2`` and both be expected) and every call names a tool of ``tool.jsonl`` (a call that
did not would be counted, reported and skipped, and a request left with none dropped: 0
calls here). ``style`` is the split and difficulty, e.g. ``out_domain-easy``.
Licence: Apache-2.0 (the repository's LICENSE).

``toolalpaca``: ToolAlpaca's evaluation sets (Tang et al., 2023, "ToolAlpaca: Generalized
Tool Learning for Language Models with 3000 Simulated Cases", arXiv 2306.05301), GitHub
``tangqiaoyu/ToolAlpaca``, ``data/eval_simulated.json`` and ``data/eval_real.json``: 21
public APIs (a server each), their operations read from each API's OpenAPI
``Documentation`` (summary and description, else the API's own line; parameters and JSON
request body; a path written inside another path's item read as a path; 99 tools), and
the APIs' ``Instructions``, user-written requests of everyday situations ("I'm planning a
trip to Japan next month. Could you find out how much 1000 US dollars would be in Japanese
yen?"), each expecting the operations its ``Golden_Answers`` call. An operation is named,
in snake case, by its key in ``Function_Projection`` (the name the answers use), else its
``operationId``, else as ToolAlpaca names one (path and method: ``jokes_random_get``), which
the answers also use. ``getDetails`` (asking the user for details) is no tool, and a mark
before a name (``[Optional]``) is dropped; a call to an operation not found would be
counted, reported and skipped, and a request left with none dropped (none at the commit
converted: 214 requests). ``style`` is ``simulated`` or ``real``. Licence: Apache-2.0 (the
repository's LICENSE).

``toolalpaca_apis``: the same requests one level up, as a host of plugins sees them: the
1,425 APIs of ToolAlpaca's ``data/public_apis.json`` (the public-apis list, which ToolAlpaca
drew its APIs from) are the catalogue, a tool an API (its name, its one-line description,
no parameters; a server per category; a name the list repeats for another API gets
``_2``), and each evaluation request expects the API it was written for (the first of its
name; an API not in the list, CurrencyBeacon at the commit converted, has its requests
counted, reported and skipped: 203 of 214 are kept). Brand names and a line of description
each, against requests written from the API's whole documentation.

``restbench``: RestBench (Song et al., 2023, "RestGPT: Connecting Large Language Models with
Real-World RESTful APIs", arXiv 2306.06624), GitHub ``Yifan-Song793/RestGPT``: the TMDB and
Spotify OpenAPI specs (``specs/{tmdb,spotify}_oas.json``; each operation a tool of server
``tmdb`` or ``spotify``, named by its method and path, ``get_movie_movie_id_credits``; a body
property never replaces a parameter of its name) pooled into one catalogue of 94 tools, and
the 157 requests of ``datasets/{tmdb,spotify}.json``, each expecting every endpoint of its
solution path. Endpoints are compared with their path parameters unnamed (the solution's
``/person/{movie_id}/movie_credits`` is the spec's ``/person/{person_id}/...``); one the
specs do not hold (``GET /track/{id}`` at the commit converted) is reported with its request
and skipped. ``style`` is the service. Licence: MIT (the repository's LICENSE).

Names are reduced to ``[a-z0-9_]``, the server cut to 48 characters and the name to 72
(MCP's limit is 128; a repeated ``server__name`` gets ``_2``, ``_3``…);
parameters become a JSON schema (types mapped to JSON types, descriptions kept); an empty
description is replaced by the API's name. Every request is English. The converted files
stay in the cache for evaluation and are never redistributed.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import re
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class PublicSet:
    """A set's repository, the commit converted for docs/quality.md, and its licence."""

    title: str
    repo: str
    commit: str
    marker: str  # a directory that tells a work tree of the repository
    paths: str
    licence: str


SETS = {
    "toollens": PublicSet(
        "ToolLens (test split)",
        "quchangle1/COLT",
        "bbec292c38cabe3fbae098f50cc31b2e9f7e8fca",
        "datasets/ToolLens",
        "datasets/ToolLens/{corpus.jsonl,queries.jsonl,qrels/test.tsv}",
        "no licence file; the README releases the dataset for research; tools from ToolBench "
        "(Apache-2.0) and RapidAPI listings",
    ),
    "stabletoolbench": PublicSet(
        "StableToolBench solvable test queries",
        "THUNLP-MT/StableToolBench",
        "aa4ed9f4737ad98bd706663f01d63623c3427812",
        "solvable_queries",
        "solvable_queries/test_instruction/{G1_instruction,G1_category,G1_tool,"
        "G2_instruction,G2_category,G3_instruction}.json",
        "Apache-2.0 (the repository's LICENSE)",
    ),
    "mcptoolbench": PublicSet(
        "MCPToolBench++ single-call sets",
        "AI-Agent-Hub/MCPToolBenchPP",
        "0c69e53fb01aa14f1f9d977446a7b5493c10ee56",
        "data",
        "data/browser/browser_0724_single_v3.json, data/file_system/filesystem_0723_single.json, "
        "data/finance/finance_0724_single_v3.json, data/search/search_0725_single_v2.json",
        "no licence file in the repository",
    ),
}
SETS["apibank"] = PublicSet(
    "API-Bank level-1 dialogues",
    "AlibabaResearch/DAMO-ConvAI",
    "483554eae102996f5ec1f4feab4e78ef29c2a394",
    "api-bank",
    "api-bank/apis/*.py (each API class's description and input_parameters, read as "
    "literals, never run), api-bank/lv1-lv2-samples/level-1-given-desc/*.jsonl",
    "Apache-2.0 (api-bank/LICENSE)",
)
SETS["sealtools"] = PublicSet(
    "Seal-Tools test sets (in and out of domain)",
    "fairyshine/Seal-Tools",
    "ce753ecd60ed08dd376984035de531ab8421f1c6",
    "Seal-Tools_Dataset",
    "Seal-Tools_Dataset/{tool.jsonl,test_in_domain.jsonl,test_out_domain.jsonl}",
    "Apache-2.0 (the repository's LICENSE)",
)
SETS["toolalpaca"] = PublicSet(
    "ToolAlpaca evaluation sets (simulated and real)",
    "tangqiaoyu/ToolAlpaca",
    "189069998d64a7baf1b4a1c3c4b2e75eb9d05532",
    "data",
    "data/{eval_simulated,eval_real}.json (each API's OpenAPI ``Documentation``, its "
    "``Instructions`` and ``Golden_Answers``)",
    "Apache-2.0 (the repository's LICENSE)",
)
SETS["restbench"] = PublicSet(
    "RestBench (TMDB and Spotify)",
    "Yifan-Song793/RestGPT",
    "d99012860cb45323975bf5780152d7aa44f390f5",
    "specs",
    "specs/{tmdb,spotify}_oas.json, datasets/{tmdb,spotify}.json",
    "MIT (the repository's LICENSE)",
)
SETS["toolalpaca_apis"] = PublicSet(
    "ToolAlpaca's requests over the public-apis list, one tool an API",
    "tangqiaoyu/ToolAlpaca",
    "189069998d64a7baf1b4a1c3c4b2e75eb9d05532",
    "data",
    "data/public_apis.json (each API's name, description and category), "
    "data/{eval_simulated,eval_real}.json (each API's name and ``Instructions``)",
    "Apache-2.0 (the repository's LICENSE); the list itself is public-apis/public-apis (MIT)",
)
SEAL_TOOLS = "Seal-Tools_Dataset/tool.jsonl"
SEAL_SPLITS = ("test_in_domain", "test_out_domain")
APIBANK_APIS = "api-bank/apis"
APIBANK_DIALOGUES = "api-bank/lv1-lv2-samples/level-1-given-desc"
#: Called to log in before the asked-for call: no request asks for it.
APIBANK_AUXILIARY = frozenset({"GetUserToken"})
STB_GROUPS = (
    "G1_instruction",
    "G1_category",
    "G1_tool",
    "G2_instruction",
    "G2_category",
    "G3_instruction",
)
MCPTB_FILES = {
    "browser": "data/browser/browser_0724_single_v3.json",
    "file_system": "data/file_system/filesystem_0723_single.json",
    "finance": "data/finance/finance_0724_single_v3.json",
    "search": "data/search/search_0725_single_v2.json",
}

_ENTRY = re.compile(
    r"^category_name:(?P<category>.*?), tool_name:(?P<tool>.*?), api_name:(?P<api>.*?), "
    r"api_description:(?P<description>.*?), required_params: (?P<required>\[.*?\]), "
    r"optional_params: (?P<optional>\[.*?\]), return_schema: (?P<returns>.*)$",
    re.DOTALL,
)
_NOT_NAME = re.compile(r"[^a-z0-9]+")
_JSON_TYPES = {
    "string": "string",
    "str": "string",
    "number": "number",
    "float": "number",
    "integer": "integer",
    "int": "integer",
    "boolean": "boolean",
    "bool": "boolean",
    "array": "array",
    "object": "object",
}

#: Seal-Tools writes Python's type names; list and dict as well, though its tools use none.
_SEAL_TYPES = {**_JSON_TYPES, "list": "array", "dict": "object"}

Records = list[dict[str, Any]]
Queries = list[dict[str, Any]]


def default_out() -> Path:
    """The cache root: ``$TOOLSURFACE_PUBLIC_DATA``, else ``~/.cache/toolsurface/public``."""
    env = os.environ.get("TOOLSURFACE_PUBLIC_DATA")
    return Path(env) if env else Path.home() / ".cache" / "toolsurface" / "public"


class Repo:
    """A fetched repository's files: from a work tree, or from a git directory at a commit."""

    def __init__(self, source: Path, commit: str, marker: str) -> None:
        self.source, self.commit = source, commit
        self.tree = (source / marker).is_dir()

    def _git(self, *args: str) -> str:
        done = subprocess.run(
            ["git", "--git-dir", str(self.source), *args], capture_output=True, check=False
        )
        if done.returncode != 0:
            err = done.stderr.decode("utf-8", "replace").strip()
            raise SystemExit(f"{self.source}: git {' '.join(args)}: {err}")
        return done.stdout.decode("utf-8")

    def __call__(self, path: str) -> str:
        """The text of ``path``."""
        if self.tree:
            return (self.source / path).read_text(encoding="utf-8")
        try:
            return self._git("show", f"{self.commit}:{path}")
        except SystemExit as exc:
            raise SystemExit(f"cannot read {path} at {self.commit}: {exc}") from None

    def ls(self, folder: str) -> list[str]:
        """The paths of the files directly in ``folder``, sorted."""
        if self.tree:
            return sorted(
                str(p.relative_to(self.source))
                for p in (self.source / folder).iterdir()
                if p.is_file()
            )
        out = self._git("ls-tree", "--name-only", f"{self.commit}:{folder}")
        return sorted(f"{folder}/{n}" for n in out.splitlines() if n)


def reader(source: Path, commit: str, marker: str) -> Repo:
    """Read a repository file from a work tree, or from a git directory at ``commit``."""
    return Repo(source, commit, marker)


def slug(text: str) -> str:
    """``[a-z0-9_]`` only, no leading or trailing ``_``; ``x`` when nothing is left."""
    return _NOT_NAME.sub("_", text.lower()).strip("_") or "x"


def _prop(kind: Any, about: Any, types: dict[str, str] | None = None) -> dict[str, Any]:
    """A JSON schema property: the set's type mapped to JSON's (else string), and its
    description when it has one."""
    prop: dict[str, Any] = {"type": (types or _JSON_TYPES).get(str(kind).lower(), "string")}
    if about:
        prop["description"] = str(about)
    return prop


def params_schema(required: list[dict[str, Any]], optional: list[dict[str, Any]]) -> Any:
    """A JSON schema object from ToolBench's parameter lists."""
    props: dict[str, Any] = {}
    for p in [*required, *optional]:
        name = str(p.get("name", "")).strip()
        if not name:
            continue
        props[name] = _prop(p.get("type", ""), p.get("description"))
    names = [str(p.get("name", "")).strip() for p in required]
    return {"type": "object", "properties": props, "required": [n for n in names if n]}


class Catalogue:
    """Server records keyed by the set's own (server, name) pair; repeats get ``_2``..."""

    def __init__(self) -> None:
        self.records: Records = []
        self._by_key: dict[Any, str] = {}
        self._taken: set[str] = set()

    def add(self, server: str, name: str, description: str, schema: Any, key: Any = None) -> str:
        """The tool's ``server__name``: the one given before for the same key.

        ``key`` is what tells two tools apart in the set (default its (server, name) pair).
        """
        key = key if key is not None else (server, name)
        if key in self._by_key:
            return self._by_key[key]
        # MCP names are at most 128 characters: room for both parts, "__" and a "_NN".
        s, n = slug(server)[:48].rstrip("_") or "x", slug(name)[:72].rstrip("_") or "x"
        full, i = f"{s}__{n}", 1
        while full in self._taken:
            i += 1
            full = f"{s}__{n}_{i}"
        self._taken.add(full)
        self._by_key[key] = full
        server_part, name_part = full.split("__", 1)
        self.records.append(
            {
                "server": server_part,
                "name": name_part,
                "description": description.strip() or name,
                "input_schema": schema,
            }
        )
        return full

    def get(self, key: Any) -> str | None:
        """The name given to ``key`` (by default a (server, name) pair), if any."""
        return self._by_key.get(key)


def convert_toollens(read: Callable[[str], str]) -> tuple[Records, Queries]:
    """ToolLens's corpus as server records, and its test split's requests with their tools."""
    cat = Catalogue()
    by_id: dict[str, str] = {}
    for lineno, line in enumerate(read("datasets/ToolLens/corpus.jsonl").splitlines(), 1):
        if not line.strip():
            continue
        doc = json.loads(line)
        m = _ENTRY.match(doc["text"])
        if m is None:
            raise SystemExit(f"corpus.jsonl line {lineno}: not the ToolBench entry shape")
        schema = params_schema(json.loads(m["required"]), json.loads(m["optional"]))
        # Corpus ids are distinct documents: a repeated (tool, api) pair stays two tools.
        name = cat.add(m["tool"], m["api"], m["description"], schema, key=doc["_id"])
        by_id[str(doc["_id"])] = name
    texts = {}
    for line in read("datasets/ToolLens/queries.jsonl").splitlines():
        if line.strip():
            q = json.loads(line)
            texts[str(q["_id"])] = q["text"]
    expected: dict[str, list[str]] = {}
    for line in read("datasets/ToolLens/qrels/test.tsv").splitlines()[1:]:
        qid, cid, score = line.split("\t")
        if int(score) > 0:
            names = expected.setdefault(qid, [])
            if by_id[cid] not in names:
                names.append(by_id[cid])
    queries = [
        {
            "id": f"toollens-{qid}",
            "query": texts[qid],
            "lang": "en",
            "style": "test",
            "expected": names,
        }
        for qid, names in expected.items()
    ]
    return cat.records, queries


def convert_stabletoolbench(read: Callable[[str], str]) -> tuple[Records, Queries]:
    """Every API offered in the six test groups, pooled; each request's relevant APIs."""
    cat = Catalogue()
    queries: Queries = []
    for group in STB_GROUPS:
        rows = json.loads(read(f"solvable_queries/test_instruction/{group}.json"))
        for row in rows:
            for api in row["api_list"]:
                cat.add(
                    api["tool_name"],
                    api["api_name"],
                    str(api.get("api_description") or ""),
                    params_schema(
                        api.get("required_parameters") or [], api.get("optional_parameters") or []
                    ),
                )
            expected = []
            for tool, api_name in row["relevant APIs"]:
                name = cat.get((tool, api_name))
                if name is None:
                    raise SystemExit(
                        f"{group} query {row['query_id']}: relevant API "
                        f"{tool}/{api_name} is not among those it was offered"
                    )
                if name not in expected:
                    expected.append(name)
            queries.append(
                {
                    "id": f"stb-{group}-{row['query_id']}",
                    "query": row["query"],
                    "lang": "en",
                    "style": group,
                    "expected": expected,
                }
            )
    return cat.records, queries


def convert_mcptoolbench(read: Callable[[str], str]) -> tuple[Records, Queries]:
    """Every MCP tool offered to a request, pooled; the labelled tool and its equivalents."""
    cat = Catalogue()
    queries: Queries = []
    for group, path in MCPTB_FILES.items():
        for row in json.loads(read(path)):
            offered = {t["name"]: t for t in row["tools"]}
            for server, names in row["mcp_tools_dict"].items():
                for n in names:
                    t = offered.get(n)
                    if t is not None:
                        cat.add(
                            server,
                            n,
                            str(t.get("description") or ""),
                            t.get("input_schema") or {"type": "object", "properties": {}},
                        )
            labels = row["function_call_label"]
            if len(labels) != 1:
                continue  # single-call sets: a request with another count is not one
            label = labels[0]
            expected = []
            for server, name in [(label["mcp_server"], label["name"])] + [
                (s["mcp_server"], s["name"]) for s in label.get("similar_tools") or []
            ]:
                full = cat.get((server, name))
                if full is not None and full not in expected:
                    expected.append(full)
            if not expected:
                raise SystemExit(f"{path} {row['uuid']}: its labelled tool was not offered")
            queries.append(
                {
                    "id": f"mcptb-{group}-{row['uuid']}",
                    "query": row["query"],
                    "lang": "en",
                    "style": group,
                    "expected": expected,
                }
            )
    return cat.records, queries


def _api_classes(text: str, where: str) -> list[tuple[str, str, dict[str, Any]]]:
    """(class name, description, input_parameters) of each API class, read as literals."""
    found = []
    for node in ast.parse(text, filename=where).body:
        if not isinstance(node, ast.ClassDef):
            continue
        attrs: dict[str, Any] = {}
        for stmt in node.body:
            if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
                target = stmt.targets[0]
                if isinstance(target, ast.Name) and target.id in (
                    "description",
                    "input_parameters",
                ):
                    attrs[target.id] = ast.literal_eval(stmt.value)
        if "description" in attrs:
            found.append((node.name, attrs["description"], attrs.get("input_parameters") or {}))
    return found


def _snake(name: str) -> str:
    """``AddAlarm`` -> ``add_alarm``, ``getTVSchedule`` -> ``get_tv_schedule``.

    The name as an MCP server would spell it; a run of capitals is one word.
    """
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "_", name).lower()


def convert_apibank(read: Callable[[str], str]) -> tuple[Records, Queries]:
    """API-Bank's APIs; a request per dialogue: the user's turns, and the APIs it calls."""
    assert isinstance(read, Repo)
    cat = Catalogue()
    for path in read.ls(APIBANK_APIS):
        if not path.endswith(".py"):
            continue
        for cls, description, params in _api_classes(read(path), path):
            schema = {
                "type": "object",
                "properties": {
                    k: {
                        "type": _JSON_TYPES.get(str(v.get("type", "")).lower(), "string"),
                        "description": str(v.get("description", "")),
                    }
                    for k, v in params.items()
                },
                "required": list(params),
            }
            cat.add("apibank", _snake(cls), description, schema, key=cls)
    queries: Queries = []
    for path in read.ls(APIBANK_DIALOGUES):
        said: list[str] = []
        asked_text = ""
        expected: list[str] = []
        for line in read(path).splitlines():
            if not line.strip():
                continue
            turn = json.loads(line)
            if turn.get("role") == "User":
                said.append(str(turn["text"]).strip())
            elif turn.get("role") == "API" and str(turn["api_name"]) not in APIBANK_AUXILIARY:
                api = str(turn["api_name"])
                name = cat.get(api)
                if name is None:
                    raise SystemExit(f"{path}: calls {api}, which no API class defines")
                if name not in expected:
                    expected.append(name)
                asked_text = " ".join(said)  # what the user had said by the last such call
        if expected and asked_text:
            stem = path.rsplit("/", 1)[-1].removesuffix(".jsonl")
            queries.append(
                {
                    "id": f"apibank-{stem}",
                    "query": asked_text,
                    "lang": "en",
                    "style": "level-1",
                    "expected": expected,
                }
            )
    return cat.records, queries


def convert_sealtools(read: Callable[[str], str]) -> tuple[Records, Queries]:
    """Seal-Tools's tools, a server per field; its test requests and the tools they call."""
    cat = Catalogue()
    by_api: dict[str, list[str]] = {}
    for lineno, line in enumerate(read(SEAL_TOOLS).splitlines(), 1):
        if not line.strip():
            continue
        tool = json.loads(line)
        api = str(tool["api_name"])
        params = tool.get("parameters") or {}
        props: dict[str, Any] = {}
        for pname, spec in params.items():
            props[str(pname)] = _prop(spec.get("type", ""), spec.get("description"), _SEAL_TYPES)
        schema = {
            "type": "object",
            "properties": props,
            "required": [str(r) for r in tool.get("required") or []],
        }
        server = str(tool.get("field") or "seal_tools").split("/")[0]
        # Each line is a tool: a repeated (field, api_name) stays two tools.
        name = cat.add(server, _snake(api), str(tool.get("api_description") or ""), schema, lineno)
        by_api.setdefault(api, []).append(name)
    queries: Queries = []
    unknown = 0
    for split in SEAL_SPLITS:
        for line in read(f"Seal-Tools_Dataset/{split}.jsonl").splitlines():
            if not line.strip():
                continue
            row = json.loads(line)
            expected: list[str] = []
            for call in row["calling"]:
                names = by_api.get(str(call["api"]))
                if names is None:
                    unknown += 1
                    continue
                expected.extend(n for n in names if n not in expected)
            if not expected:
                continue  # every call named an API that tool.jsonl does not hold
            rid = str(row["id"])
            group = rid.rsplit("-", 1)[0].removeprefix("test_")  # e.g. "out_domain-easy"
            queries.append(
                {
                    "id": f"sealtools-{rid}",
                    "query": row["query"],
                    "lang": "en",
                    "style": group,
                    "expected": expected,
                }
            )
    if unknown:
        print(f"sealtools: skipped {unknown} calls to APIs not in tool.jsonl", file=sys.stderr)
    return cat.records, queries


def _resolve(spec: Any, node: Any) -> Any:
    """``node`` with a local ``$ref`` (``#/components/...``) followed, at most 20 deep."""
    for _ in range(20):
        if not (isinstance(node, dict) and isinstance(node.get("$ref"), str)):
            return node
        target: Any = spec
        for part in node["$ref"].removeprefix("#/").split("/"):
            target = target.get(part, {}) if isinstance(target, dict) else {}
        node = target
    return node


_HTTP_METHODS = ("get", "post", "put", "patch", "delete")


def openapi_operations(spec: Any) -> list[tuple[str, str, Any, str, Any]]:
    """Each operation of an OpenAPI document: (method, path, operation, description, schema).

    The description is the summary and the description joined; the schema holds the path,
    query and header parameters and a JSON request body's properties, each with its type and
    description, as an MCP tool's input schema would.
    """
    ops = []
    paths = list((spec.get("paths") or {}).items())
    for path, item in paths:
        item = _resolve(spec, item)
        # A path written inside another's item (as ToolAlpaca's AviationAPI has them) is read
        # as a path of its own.
        paths += [(k, v) for k, v in item.items() if str(k).startswith("/") and isinstance(v, dict)]
        shared = [_resolve(spec, x) for x in item.get("parameters") or []]
        for method in _HTTP_METHODS:
            op = item.get(method)
            if not isinstance(op, dict):
                continue
            props: dict[str, Any] = {}
            required: list[str] = []
            for param in [*shared, *(_resolve(spec, x) for x in op.get("parameters") or [])]:
                name = str(param.get("name") or "").strip()
                if not name:
                    continue
                schema = _resolve(spec, param.get("schema") or {})
                # Some specs (Spotify's) keep the description in the schema.
                about = param.get("description") or schema.get("description")
                props[name] = _prop(schema.get("type", ""), about)
                # ... and write ``required`` as the string "true" or "false".
                if str(param.get("required", "")).lower() == "true":
                    required.append(name)
            body = _resolve(spec, op.get("requestBody") or {})
            content = body.get("content") or {}
            media: Any = content.get("application/json") or next(iter(content.values()), {})
            body_schema = _resolve(spec, (media or {}).get("schema") or {})
            body_names = set()
            for name, sub in (body_schema.get("properties") or {}).items():
                if str(name) in props:
                    continue  # a parameter of the same name is what a call names
                sub = _resolve(spec, sub)
                props[str(name)] = _prop(sub.get("type", ""), sub.get("description"))
                body_names.add(str(name))
            for name in body_schema.get("required") or []:
                if str(name) in body_names and str(name) not in required:
                    required.append(str(name))
            text = ". ".join(
                t.strip().rstrip(".")
                for t in (str(op.get("summary") or ""), str(op.get("description") or ""))
                if t.strip()
            )
            schema_out = {"type": "object", "properties": props, "required": required}
            ops.append((method, str(path), op, text, schema_out))
    return ops


def labels(calls: list[str], known: dict[str, str]) -> tuple[list[str], int]:
    """The tools ``calls`` name through ``known`` (in order, once each); how many name none."""
    expected: list[str] = []
    for call in calls:
        name = known.get(call)
        if name is not None and name not in expected:
            expected.append(name)
    return expected, sum(call not in known for call in calls)


def request(qid: str, query: str, style: str, expected: list[str]) -> dict[str, Any]:
    """One line of ``queries.jsonl`` (every request of these sets is English)."""
    return {"id": qid, "query": query, "lang": "en", "style": style, "expected": expected}


TOOLALPACA_FILES = ("eval_simulated", "eval_real")
#: What ToolAlpaca's answers call that is no API operation: asking the user for details.
TOOLALPACA_NOT_TOOLS = frozenset({"getDetails"})
#: A mark some answers put before an operation's name (``[Optional]updateUserProfile``).
_TOOLALPACA_MARK = re.compile(r"^\[[A-Za-z]+\]")


def convert_toolalpaca(read: Callable[[str], str]) -> tuple[Records, Queries]:
    """ToolAlpaca's evaluation APIs as servers of their operations; each instruction's calls."""
    cat = Catalogue()
    queries: Queries = []
    unknown = 0
    for split in TOOLALPACA_FILES:
        for api in json.loads(read(f"data/{split}.json")):
            server = str(api["Name"])
            spec = json.loads(api["Documentation"])
            # The set names an operation by its key in Function_Projection ([path, method]).
            named = {
                (str(where[0]).strip("/"), str(where[1]).lower()): str(fname)
                for fname, where in (api.get("Function_Projection") or {}).items()
            }
            by_op: dict[str, str] = {}
            about = str(api.get("Description") or server)
            for method, path, op, text, schema in openapi_operations(spec):
                # ToolAlpaca names an operation without an operationId by its path and method
                # ("/jokes/random/{category}" get: "jokes_random_category_get").
                generated = f"{re.sub(r'[{}]', '', path.strip('/')).replace('/', '_')}_{method}"
                op_id = named.get((path.strip("/"), method)) or str(
                    op.get("operationId") or generated
                )
                tool = cat.add(server, _snake(op_id), text or about, schema, (split, server, op_id))
                by_op[op_id] = by_op.setdefault(generated, tool)
            for i, (ask, answer) in enumerate(
                zip(api["Instructions"], api["Golden_Answers"], strict=True)
            ):
                calls = [_TOOLALPACA_MARK.sub("", str(step["Action"])) for step in answer]
                asked = [c for c in calls if c not in TOOLALPACA_NOT_TOOLS]
                expected, missed = labels(asked, by_op)
                unknown += missed
                if expected:
                    qid = f"toolalpaca-{split}-{slug(server)}-{i}"
                    queries.append(request(qid, str(ask), split.removeprefix("eval_"), expected))
    if unknown:
        print(f"toolalpaca: skipped {unknown} calls to operations not found", file=sys.stderr)
    return cat.records, queries


def convert_toolalpaca_apis(read: Callable[[str], str]) -> tuple[Records, Queries]:
    """The public-apis list as tools (one an API, a server per category); ToolAlpaca's
    evaluation requests, each expecting the API it was written for."""
    cat = Catalogue()
    by_api: dict[str, str] = {}
    for i, row in enumerate(json.loads(read("data/public_apis.json"))["entries"]):
        title = str(row["API"])
        # Every entry is a tool: the list repeats a name for different APIs (two transport
        # APIs of the Netherlands); a request names the first of its name.
        tool = cat.add(str(row["Category"]), title, str(row["Description"]), _NO_PARAMETERS, i)
        by_api.setdefault(title, tool)
    queries: Queries = []
    unlisted = 0
    for split in TOOLALPACA_FILES:
        for api in json.loads(read(f"data/{split}.json")):
            wanted = by_api.get(str(api["Name"]))
            if wanted is None:
                unlisted += len(api["Instructions"])
                continue
            for i, ask in enumerate(api["Instructions"]):
                qid = f"toolalpaca_apis-{split}-{slug(str(api['Name']))}-{i}"
                queries.append(request(qid, str(ask), split.removeprefix("eval_"), [wanted]))
    if unlisted:
        print(f"toolalpaca_apis: skipped {unlisted} requests of APIs not listed", file=sys.stderr)
    return cat.records, queries


_NO_PARAMETERS: dict[str, Any] = {"type": "object", "properties": {}}


RESTBENCH_SERVICES = ("tmdb", "spotify")


def _endpoint(call: str) -> str:
    """``METHOD /path`` with white space folded and path parameters unnamed (``{}``).

    Two templates that differ only in a parameter's name are one endpoint: a solution
    written ``/person/{movie_id}/movie_credits`` is the spec's ``/person/{person_id}/...``.
    """
    return re.sub(r"\{[^}]*\}", "{}", " ".join(call.split()))


def convert_restbench(read: Callable[[str], str]) -> tuple[Records, Queries]:
    """RestBench's two OpenAPI specs as one catalogue; each request's solution endpoints."""
    cat = Catalogue()
    queries: Queries = []
    unknown = 0
    for service in RESTBENCH_SERVICES:
        spec = json.loads(read(f"specs/{service}_oas.json"))
        by_call: dict[str, str] = {}
        for method, path, _op, text, schema in openapi_operations(spec):
            call = f"{method.upper()} {path}"
            tool = cat.add(service, f"{method} {path}", text or call, schema, call)
            by_call[_endpoint(call)] = tool
        for i, row in enumerate(json.loads(read(f"datasets/{service}.json"))):
            calls = [_endpoint(str(call)) for call in row["solution"]]
            expected, missed = labels(calls, by_call)
            for call in calls:
                if call not in by_call:
                    print(f"restbench: {service} request {i}: no endpoint {call}", file=sys.stderr)
            unknown += missed
            if expected:
                queries.append(
                    request(f"restbench-{service}-{i}", str(row["query"]), service, expected)
                )
    if unknown:
        print(f"restbench: skipped {unknown} calls to endpoints not in the spec", file=sys.stderr)
    return cat.records, queries


CONVERTERS: dict[str, Callable[[Callable[[str], str]], tuple[Records, Queries]]] = {
    "toollens": convert_toollens,
    "stabletoolbench": convert_stabletoolbench,
    "mcptoolbench": convert_mcptoolbench,
    "apibank": convert_apibank,
    "sealtools": convert_sealtools,
    "toolalpaca": convert_toolalpaca,
    "restbench": convert_restbench,
    "toolalpaca_apis": convert_toolalpaca_apis,
}


def source_note(key: str, source: Path, commit: str, counts: tuple[int, int]) -> str:
    """SOURCE.md: where the converted files came from and under what terms."""
    s = SETS[key]
    return (
        f"# {s.title} (converted by scripts/public_toolsets.py)\n\n"
        f"- repository: GitHub {s.repo}, commit {commit}\n"
        f"- files: {s.paths}, read from {source}\n"
        f"- licence: {s.licence}.\n"
        f"  Evaluation only: do not redistribute or commit these files.\n"
        f"- {counts[0]} tools, {counts[1]} requests\n"
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("set", choices=sorted(SETS))
    ap.add_argument("--source", type=Path, required=True, help="the fetched repository")
    ap.add_argument("--commit", default=None, help="default: the commit docs/quality.md used")
    ap.add_argument("--out", type=Path, default=None, help="cache root (outside the repo)")
    args = ap.parse_args(argv)
    spec = SETS[args.set]
    commit = args.commit or spec.commit
    out = (args.out or default_out()) / args.set
    repo = Path(__file__).resolve().parent.parent
    if out.resolve().is_relative_to(repo):
        raise SystemExit(f"{out}: inside the repository; the converted data is never committed")
    try:
        records, queries = CONVERTERS[args.set](reader(args.source, commit, spec.marker))
    except (KeyError, IndexError, TypeError, AttributeError, ValueError) as exc:
        # A file of another shape than the set publishes (another commit, an edited copy).
        raise SystemExit(
            f"{args.set}: {args.source} at {commit}: not the set's published shape "
            f"({type(exc).__name__}: {exc})"
        ) from None
    out.mkdir(parents=True, exist_ok=True)
    (out / "catalogue.json").write_text(
        json.dumps(records, ensure_ascii=False, indent=1), encoding="utf-8"
    )
    with (out / "queries.jsonl").open("w", encoding="utf-8") as fh:
        for q in queries:
            fh.write(json.dumps(q, ensure_ascii=False) + "\n")
    note = source_note(args.set, args.source, commit, (len(records), len(queries)))
    (out / "SOURCE.md").write_text(note, encoding="utf-8")
    print(f"{out}: {len(records)} tools, {len(queries)} requests", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
