"""Regenerate the conformance files under tests/data from the pure (reference) engine.

    TOOLSURFACE_ENGINE=pure python scripts/gen_vectors.py

analysis_vectors.jsonl: every input of analysis_inputs.jsonl with its tokens.
scoring_vectors.json: a self-contained catalogue, lexicon, settings and queries with the
ranked names and scores the reference gives. mention_vectors.json: the same catalogue with
groups and aliases declared (service mentions, docs/analysis.md section 8, and questions,
section 10): per query, mention weight and question weight, with and without an admitted
set, the groups mentioned and the hits.
learned_vectors.json: the same catalogue with requests taught (learned hints, §9): per query
and learned weight and b, with and without an admitted set, the hits and their scores. Both
engines must reproduce every file; a change to analysis or scoring that moves them is
a change to the spec (docs/analysis.md).
"""

from __future__ import annotations

import json
from pathlib import Path

from toolsurface.catalogue import demo_catalogue
from toolsurface.models import FieldValues, RetrievalSettings
from toolsurface.registry import ToolRegistry, tool_fields
from toolsurface.retrieval.engine.backend import backend

DATA = Path(__file__).resolve().parent.parent / "tests" / "data"

QUERIES = [
    "list open pull requests",
    "покажи открытые пулреквесты",
    "create a ticket for the login bug",
    "заведи тикет на баг",
    "send a message to the #deploys channel",
    "напиши в канал что релиз готов",
    "who is on call right now",
    "кто дежурит",
    "schedule a meeting with the team tomorrow",
    "назначь созвон",
    "restart the payments service in prod",
    "перезапусти сервис",
    "show recent errors in sentry",
    "read the config file",
    "open https://example.com in the browser and take a screenshot",
    "merge MR 42",
    "смержи мр",
    "run a SQL query against the orders table",
    "archive the support ticket",
    "заархивируй тикет поддержки",
    "pul reqests",
    "crate isue",
    "k8s pods crashlooping",
    "",
    "the and of",
    "who's holding the pager",
    "bounce the payments pods",
    "кто на пейджере",
    "BrowserOpen",
    "🚀 deploy v2.3.1",
    # the payload and numbers weigh half: quoted text, text after "word: ", 2023-04-15
    'create an issue: "login page crashes on submit"',
    'post "deploy done" in the releases channel',
    "заведи тикет: страница логина падает после релиза",
    "list pull requests merged since 2023-04-15 in repo 42",
    "«открытые пулреквесты» покажи",
    # issue keys expand to the <issue-key> source's targets (half as much in the payload)
    "move ENG-1423 to done",
    'close it: "duplicate of OPS-77"',
    "link PROJ-7 and K8S-12, not eng-5 or A-1",
    # a file name is an argument's value, weighed like the payload
    "rename notes.txt to notes-old.TXT",
    "read the config file config/app.yaml of the node.js service",
    # the context before the ask weighs as the payload does
    "the checks on PR 231 are green, go ahead and merge it",
    "can you merge PR 231",
    "сервис упал, можешь перезапустить?",
    'post "can you review this?" in the releases channel',
    "can you check the build and can you merge it",
    # a path's parts are an argument's value; CI/CD is no path
    "show merge requests in platform/api and ./dist/worker.js, not CI/CD or /tmp",
    "clone torvalds/linux",
    # the subject of a search weighs as the payload does, past the first word and the ask
    "find the wiki page about release runbooks",
    "about the outage ENG-7, can you post an update mentioning ENG-8",
    "найди письмо ПРО акт сверки",
    'post "about time" in the releases channel',
]
LEXICON = [
    ["пулреквест", "pull request"],
    ["покажи", "show list"],
    ["открытый", "open"],
    ["тикет", "ticket issue"],
    ["заведи", "create"],
    ["баг", "bug issue"],
    ["канал", "channel"],
    ["напиши", "message"],
    ["дежурит", "on call"],
    ["созвон", "meeting call event"],
    ["назначь", "schedule create"],
    ["перезапусти", "restart"],
    ["сервис", "service"],
    ["смержи", "merge"],
    ["мр", "merge request"],
    ["заархивируй", "archive"],
    ["поддержка", "support"],
    ["pr", "pull request"],
    ["mr", "merge request"],
    ["k8s", "kubernetes"],
    ["on call", "oncall schedule"],
    ["<issue-key>", "issue ticket"],
]
SETTINGS = [
    {
        "weights": [3.0, 2.5, 2.0, 1.0, 0.4],
        "b": [0.3, 0.5, 0.5, 0.75, 0.75],
        "k1": 1.2,
        "expansion_weight": 0.6,
    },
    {
        "weights": [1.0, 1.0, 1.0, 1.0, 1.0],
        "b": [0.0, 1.0, 0.25, 0.9, 0.5],
        "k1": 0.7,
        "expansion_weight": 1.0,
    },
    {
        "weights": [5.0, 2.5, 1.25, 0.4, 0.4, 0.75],
        "b": [0.5, 0.5, 0.5, 0.6, 0.6, 0.3],
        "k1": 2.0,
        "expansion_weight": 1.0,
    },
]


def main() -> None:
    pure = backend("pure")
    inputs = [
        json.loads(x)
        for x in (DATA / "analysis_inputs.jsonl").read_text("utf-8").splitlines()
        if x.strip()
    ]
    with (DATA / "analysis_vectors.jsonl").open("w", encoding="utf-8") as out:
        for item in inputs:
            row = {
                "category": item["category"],
                "text": item["text"],
                "tokens": pure.tokens(item["text"]),
            }
            out.write(json.dumps(row, ensure_ascii=True) + "\n")
    tools = [
        t
        for t in demo_catalogue()
        if t.name.split("__")[0]
        in {
            "github",
            "gitlab",
            "jira",
            "zendesk",
            "slack",
            "gcal",
            "pagerduty",
            "k8s",
            "fs",
            "browser",
            "postgres",
            "sentry",
        }
    ]
    # The sixth field, learned requests, as the registry composes it (one a line).
    taught: dict[str, list[str]] = {}
    for tool, query in LEARNED:
        if query not in taught.setdefault(tool, []):
            taught[tool].append(query)
    docs = [
        {"name": t.name, "fields": [*tool_fields(t), "\n".join(taught.get(t.name, []))]}
        for t in tools
    ]
    names = [d["name"] for d in docs]
    index = pure.index(names, [tuple(d["fields"]) for d in docs])
    lexicon = pure.lexicon([tuple(e) for e in LEXICON])
    cases = []
    for s in SETTINGS:
        for q in QUERIES:
            ids, scores, fallback = index.search(
                q,
                10,
                tuple(s["weights"]),
                tuple(s["b"]),
                s["k1"],
                s["expansion_weight"],
                lexicon,
                None,
            )
            cases.append(
                {
                    "settings": s,
                    "query": q,
                    "names": [names[i] for i in ids],
                    "scores": scores,
                    "fallback": fallback,
                }
            )
    payload = {"documents": docs, "lexicon": LEXICON, "cases": cases}
    (DATA / "scoring_vectors.json").write_text(
        json.dumps(payload, ensure_ascii=False, indent=1) + "\n", "utf-8"
    )
    learned = learned_cases(tools)
    (DATA / "learned_vectors.json").write_text(
        json.dumps(learned, ensure_ascii=False, indent=1) + "\n", "utf-8"
    )
    print(f"{len(learned['cases'])} learned cases")
    mentions = mention_cases(tools)
    (DATA / "mention_vectors.json").write_text(
        json.dumps(mentions, ensure_ascii=False, indent=1) + "\n", "utf-8"
    )
    print(f"{len(inputs)} analysis vectors, {len(cases)} scoring cases over {len(docs)} tools")
    print(f"{len(mentions['cases'])} mention cases")


#: Groups of the mention vectors: (name, prefix, aliases).
MENTION_GROUPS = [
    ["github", "github__", ["GitHub", "гитхаб"]],
    ["gitlab", "gitlab__", []],
    ["slack", "slack__", ["слак"]],
    ["jira", "jira__", ["atlassian jira"]],
    ["gcal", "gcal__", ["google calendar"]],
    ["k8s", "k8s__", ["kubernetes", "kube ctl"]],
    ["pagerduty", "pagerduty__", ["pager duty", "pd"]],
]
MENTION_QUERIES = [
    "list open pull requests on github",
    "list open merge requests in gitlab",
    "send a message in slack",
    "напиши в слак что релиз готов",
    "create a jira ticket for the login bug",
    "create an atlassian jira ticket",
    "schedule a meeting in google calendar",
    "schedule a meeting in google",
    "restart the kubernetes pod",
    "who is on call in pager duty",
    "покажи пулреквесты в гитхабе",
    'post "github is down" to the channel',
    "gihtub pul reqests",
    "list issues",
    # Questions (§10): a question mark outside the payload, or a question word first.
    "what pull requests are open on github?",
    "who is on call right now",
    "какие поды упали в kubernetes",
    'post "is the deploy done?" in slack',
    "merge the pull request?",
]


def _reference(tools: list, s: dict) -> tuple[RetrievalSettings, ToolRegistry]:
    """The settings ``s`` as ``RetrievalSettings``, and a pure registry of ``tools``."""
    fields = ("name", "search_hint", "summary", "body", "params")
    base = RetrievalSettings(
        weights=FieldValues(**dict(zip(fields, s["weights"]))),
        b=FieldValues(**dict(zip(fields, s["b"]))),
        k1=s["k1"],
        expansion_weight=s["expansion_weight"],
    )
    registry = ToolRegistry(
        tools, engine="pure", lexicon=[tuple(e) for e in LEXICON], word_forms=False
    )
    return base, registry


def mention_cases(tools: list) -> dict:
    """Registry-level vectors of the service-mention boost, from the pure engine."""
    s = SETTINGS[0]
    base, registry = _reference(tools, s)
    for name, prefix, aliases in MENTION_GROUPS:
        registry.declare_group(name, prefix=prefix, aliases=aliases)
    admitted = sorted(n for n in registry.names() if not n.startswith("gitlab__"))[::2]
    cases = []
    for weight, question in (
        (0.0, 0.0),
        (0.5, 0.0),
        (2.0, 0.0),
        (0.0, 0.3),
        (0.5, 0.3),
        (0.5, 2.0),
    ):
        chosen = base.model_copy(update={"mention_weight": weight, "question_weight": question})
        for q in MENTION_QUERIES:
            for allowed in (None, admitted):
                hits = registry.search(q, 10, settings=chosen, admitted=allowed)
                cases.append(
                    {
                        "query": q,
                        "mention_weight": weight,
                        "question_weight": question,
                        "admitted": allowed is not None,
                        "mentioned": registry.mentioned_groups(q, chosen),
                        "names": [h.name for h in hits],
                        "scores": [h.score for h in hits],
                        "fallback": bool(hits) and hits[0].fallback,
                    }
                )
    return {
        "settings": s,
        "groups": MENTION_GROUPS,
        "admitted": admitted,
        "lexicon": LEXICON,
        "tools": [t.model_dump(mode="json") for t in tools],
        "cases": cases,
    }


#: Requests taught for tools of the catalogue (tool, request), some twice, some in Russian.
LEARNED = [
    ["pagerduty__get_oncalls", "who's holding the pager tonight"],
    ["pagerduty__get_oncalls", "кто сегодня на пейджере"],
    ["pagerduty__get_oncalls", "who's holding the pager tonight"],
    ["k8s__rollout_restart", "bounce the checkout pods"],
    ["k8s__rollout_restart", "передёрни поды checkout"],
    ["slack__add_reaction", "put an :eyes: on that message"],
    ["github__list_pull_requests", "what PRs are waiting on me"],
    ["gcal__find_free_slots", "when can bob and I meet"],
    ["jira__create_issue", "log a bug: export button does nothing"],
]
LEARNED_QUERIES = [
    "who's holding the pager",
    "кто на пейджере",
    "bounce the payments pods",
    "put an :eyes: on it",
    "what PRs are waiting",
    "when can we meet",
    "log a bug",
    "list open pull requests",
    "send a message",
    "",
]
#: (learned weight, learned b) of the learned cases.
LEARNED_POINTS = [(0.0, 0.0), (0.25, 0.0), (1.0, 0.75)]


def learned_cases(tools: list) -> dict:
    """Registry-level vectors of learned hints (the sixth field), from the pure engine."""
    s = SETTINGS[0]
    base, registry = _reference(tools, s)
    registry.learn_many([(query, tool) for tool, query in LEARNED])
    admitted = sorted(n for n in registry.names() if n != "pagerduty__get_oncalls")[::2]
    cases = []
    for weight, b in LEARNED_POINTS:
        chosen = base.model_copy(update={"learned_weight": weight, "learned_b": b})
        for q in LEARNED_QUERIES:
            for allowed in (None, admitted):
                hits = registry.search(q, 10, settings=chosen, admitted=allowed)
                cases.append(
                    {
                        "query": q,
                        "learned_weight": weight,
                        "learned_b": b,
                        "admitted": allowed is not None,
                        "names": [h.name for h in hits],
                        "scores": [h.score for h in hits],
                    }
                )
    return {
        "tools": [t.model_dump(mode="json") for t in tools],
        "lexicon": LEXICON,
        "settings": s,
        "learned": LEARNED,
        "admitted": admitted,
        "cases": cases,
    }


if __name__ == "__main__":
    main()
