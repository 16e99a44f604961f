"""A small MCP server with everything beside tools, over stdio (mcp 2.x lowlevel ``Server``).

Resources (``memo://insights``, ``memo://readme``), a template (``note://{name}``),
subscriptions (``update_memo`` changes the insights memo and tells its subscribers),
prompts (``mcp-demo`` with a ``topic`` argument, ``summarise``), completions of the
prompt's argument and the template's ``name``, and tools that ask the client something
while they run: ``ask_model`` (sampling), ``ask_user`` (elicitation), ``show_roots``
(roots), ``chatty`` (log messages and progress); ``slow`` notes its own cancellation.
Run it as ``python library_server.py``.
"""

from __future__ import annotations

import warnings
from typing import Any

import anyio
from mcp import types
from mcp.server.lowlevel import NotificationOptions, Server
from mcp.server.stdio import stdio_server

warnings.simplefilter("ignore")  # the SDK's deprecation notes of logging: this server logs

MEMOS = {"memo://insights": "No insights yet.", "memo://readme": "Read me first."}
NOTES = {"alpha": "The first note.", "beta": "The second note.", "bravo": "Well done."}
TOPICS = ["databases", "deployments", "dns"]
SUBSCRIBED: set[str] = set()


async def list_resources(ctx: Any, params: Any) -> types.ListResourcesResult:
    resources = [
        types.Resource(uri=uri, name=uri.split("//")[1], mime_type="text/plain") for uri in MEMOS
    ]
    return types.ListResourcesResult(resources=resources)


async def list_templates(ctx: Any, params: Any) -> types.ListResourceTemplatesResult:
    template = types.ResourceTemplate(uri_template="note://{name}", name="note")
    return types.ListResourceTemplatesResult(resource_templates=[template])


async def read_resource(ctx: Any, params: Any) -> types.ReadResourceResult:
    uri = params.uri
    text = MEMOS.get(uri)
    if text is None and uri.startswith("note://"):
        text = NOTES.get(uri.removeprefix("note://"))
    if text is None:
        from mcp import MCPError

        raise MCPError(-32002, f"no such resource here: {uri}")
    contents = [types.TextResourceContents(uri=uri, text=text, mime_type="text/plain")]
    return types.ReadResourceResult(contents=contents)


async def subscribe(ctx: Any, params: Any) -> types.EmptyResult:
    SUBSCRIBED.add(params.uri)
    return types.EmptyResult()


async def unsubscribe(ctx: Any, params: Any) -> types.EmptyResult:
    SUBSCRIBED.discard(params.uri)
    return types.EmptyResult()


PROMPTS = [
    types.Prompt(
        name="mcp-demo",
        description="A prompt to seed the database with initial data and demonstrate it",
        arguments=[types.PromptArgument(name="topic", description="the topic", required=True)],
    ),
    types.Prompt(name="summarise", description="Summarise the memos"),
]


async def list_prompts(ctx: Any, params: Any) -> types.ListPromptsResult:
    return types.ListPromptsResult(prompts=PROMPTS)


async def get_prompt(ctx: Any, params: Any) -> types.GetPromptResult:
    topic = (params.arguments or {}).get("topic", "everything")
    text = f"Let us explore {topic}." if params.name == "mcp-demo" else "Summarise the memos."
    message = types.PromptMessage(role="user", content=types.TextContent(type="text", text=text))
    return types.GetPromptResult(description=f"{params.name} prompt", messages=[message])


async def complete(ctx: Any, params: Any) -> types.CompleteResult:
    typed = params.argument.value
    pool = TOPICS if isinstance(params.ref, types.PromptReference) else sorted(NOTES)
    values = [v for v in pool if v.startswith(typed)]
    return types.CompleteResult(completion=types.Completion(values=values, total=len(values)))


TOOLS = [
    types.Tool(name=n, description=d, input_schema={"type": "object", "properties": {}})
    for n, d in [
        ("update_memo", "Add an insight to the insights memo"),
        ("ask_model", "Ask the client's model a question (sampling)"),
        ("ask_user", "Ask the user for their name (elicitation)"),
        ("show_roots", "List the client's roots"),
        ("chatty", "Log three messages (naming 'who') and report progress while working"),
        ("slow", "Wait a minute; if cancelled, write 'cancelled' to the file 'marker'"),
    ]
]


async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
    return types.ListToolsResult(tools=TOOLS)


def _text(text: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)])


async def call_tool(ctx: Any, params: Any) -> types.CallToolResult:
    session = ctx.session
    if params.name == "update_memo":
        MEMOS["memo://insights"] = "Insight: the gateway forwards resources."
        if "memo://insights" in SUBSCRIBED:
            await session.send_resource_updated("memo://insights")
        return _text("updated")
    if params.name == "ask_model":
        question = types.SamplingMessage(
            role="user", content=types.TextContent(type="text", text="What is 2 + 2?")
        )
        answer = await session.create_message(
            [question], max_tokens=10, related_request_id=ctx.request_id
        )
        return _text(f"the model said: {answer.content.text} ({answer.model})")
    if params.name == "ask_user":
        schema = {"type": "object", "properties": {"name": {"type": "string"}}}
        got = await session.elicit_form(
            "What is your name?", schema, related_request_id=ctx.request_id
        )
        return _text(f"elicitation: {got.action} {got.content}")
    if params.name == "show_roots":
        roots = await session.list_roots()
        return _text("roots: " + ", ".join(str(r.uri) for r in roots.roots))
    if params.name == "chatty":
        token = (ctx.meta or {}).get("progress_token")  # the SDK's RequestParamsMeta key
        for step in range(3):
            who = (params.arguments or {}).get("who")
            said = f"step {step}" if who is None else f"{who}: step {step}"
            await session.send_log_message(
                "info", said, logger="library", related_request_id=ctx.request_id
            )
            if token is not None:
                await session.send_progress_notification(
                    token, step + 1, 3, f"step {step}", related_request_id=ctx.request_id
                )
        return _text("done chatting")
    if params.name == "slow":
        try:
            await anyio.sleep(60)
        except anyio.get_cancelled_exc_class():
            with open((params.arguments or {})["marker"], "w", encoding="utf-8") as out:
                out.write("cancelled")
            raise
        return _text("waited")
    return types.CallToolResult(content=[], is_error=True)


async def set_level(ctx: Any, params: Any) -> types.EmptyResult:
    return types.EmptyResult()


def main() -> None:
    server = Server(
        "library",
        on_list_resources=list_resources,
        on_list_resource_templates=list_templates,
        on_read_resource=read_resource,
        on_subscribe_resource=subscribe,
        on_unsubscribe_resource=unsubscribe,
        on_list_prompts=list_prompts,
        on_get_prompt=get_prompt,
        on_completion=complete,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        on_set_logging_level=set_level,
    )
    options = server.create_initialization_options(
        NotificationOptions(resources_changed=True, prompts_changed=True)
    )

    async def run() -> None:
        async with stdio_server() as (read, write):
            await server.run(read, write, options)

    anyio.run(run)


if __name__ == "__main__":
    main()
