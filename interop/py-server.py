#!/usr/bin/env python3
"""A small MCP server on the official Python SDK 2.3.0 (`mcp.server.mcpserver.MCPServer`), for our
client (`interop-client --fixtures`) to walk. The SDK serves both eras on one endpoint (the
client's first request decides); our client walks it in the stateless era (2026-07-28).

    .venv/bin/python py-server.py stdio
    .venv/bin/python py-server.py http [--port P]   # Streamable HTTP at /mcp on 127.0.0.1; P=0
                                                    # picks a port; announces
                                                    # "py-server: serving http://…/mcp" on stderr

The fixtures are the same as ts2-server.mjs's:
  tool echo {message}   -> "Echo: <message>"
  tool greet            -> MRTR: elicits key user_name {name} -> "Hello, <name>!"
  tool two_step         -> MRTR: round 1 elicits step1 {name}, round 2 (the name carried in the
                           requestState, which the SDK seals) elicits step2 {color}
                           -> "<name> likes <color>"
  tool ask_model        -> MRTR: sampling key question -> "Model answered: <text>"
  resource fixture://greeting (text/plain) "Hello from the <server name>."
  prompt greeting_prompt {name} -> user "Please greet <name> warmly."
  completion of greeting_prompt's name from Alice, Alan, Bob
  tool touch            -> publishes a resource-updated event for fixture://greeting to the
                           subscriptions/listen streams -> "touched fixture://greeting"
"""

from __future__ import annotations

import json
import sys

import anyio
import mcp.types as types
from mcp.server.mcpserver import Context, MCPServer

NAME = "interop-py-server"
GREETING = f"Hello from the {NAME}."
NAMES = ["Alice", "Alan", "Bob"]

mcp = MCPServer(
    NAME,
    version="2.3.0-interop",
    instructions="Interop fixtures: echo, greet, two_step, ask_model, touch, fixture://greeting, greeting_prompt",
    log_level="WARNING",
)


def ask_one(message: str, field: str) -> types.ElicitRequest:
    return types.ElicitRequest(
        params=types.ElicitRequestFormParams(
            message=message,
            requested_schema={"type": "object", "properties": {field: {"type": "string"}}, "required": [field]},
        )
    )


def accepted(ctx: Context, key: str, field: str) -> str | None:
    r = (ctx.input_responses or {}).get(key)
    if isinstance(r, types.ElicitResult) and r.action == "accept" and isinstance((r.content or {}).get(field), str):
        return r.content[field]
    return None


def text(t: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=t)])


@mcp.tool(description="Echoes its message", structured_output=False)
def echo(message: str) -> str:
    return f"Echo: {message}"


@mcp.tool(description="Asks the user for a name (one MRTR round), then greets")
async def greet(ctx: Context) -> types.CallToolResult | types.InputRequiredResult:
    name = accepted(ctx, "user_name", "name")
    if name is None:
        return types.InputRequiredResult(input_requests={"user_name": ask_one("What is your name?", "name")})
    return text(f"Hello, {name}!")


@mcp.tool(description="Two MRTR rounds; the first answer travels in the requestState")
async def two_step(ctx: Context) -> types.CallToolResult | types.InputRequiredResult:
    carried = json.loads(ctx.request_state) if ctx.request_state else {}
    color = accepted(ctx, "step2", "color")
    if "name" in carried and color is not None:
        return text(f"{carried['name']} likes {color}")
    name = accepted(ctx, "step1", "name")
    if name is not None:
        return types.InputRequiredResult(
            input_requests={"step2": ask_one("Step 2: What is your favorite color?", "color")},
            request_state=json.dumps({"name": name}),
        )
    return types.InputRequiredResult(input_requests={"step1": ask_one("Step 1: What is your name?", "name")})


@mcp.tool(description="Asks the client's model one question (MRTR sampling)")
async def ask_model(ctx: Context) -> types.CallToolResult | types.InputRequiredResult:
    r = (ctx.input_responses or {}).get("question")
    if not isinstance(r, types.CreateMessageResult):
        question = types.SamplingMessage(
            role="user", content=types.TextContent(type="text", text="What is the capital of France?")
        )
        return types.InputRequiredResult(
            input_requests={
                "question": types.CreateMessageRequest(
                    params=types.CreateMessageRequestParams(messages=[question], max_tokens=50)
                )
            }
        )
    content = r.content[0] if isinstance(r.content, list) else r.content
    return text(f"Model answered: {getattr(content, 'text', json.dumps(content.model_dump(mode='json')))}")


@mcp.tool(description="Announces an update of fixture://greeting", structured_output=False)
async def touch(ctx: Context) -> str:
    await ctx.notify_resource_updated("fixture://greeting")
    return "touched fixture://greeting"


@mcp.resource("fixture://greeting", name="greeting", description="A fixed greeting", mime_type="text/plain")
def greeting() -> str:
    return GREETING


@mcp.prompt(name="greeting_prompt", description="Asks the model to greet someone")
def greeting_prompt(name: str) -> str:
    return f"Please greet {name} warmly."


@mcp.completion()
async def complete(ref, argument, context):
    if isinstance(ref, types.PromptReference) and ref.name == "greeting_prompt" and argument.name == "name":
        values = [n for n in NAMES if n.startswith(argument.value)]
        return types.Completion(values=values, total=len(values), has_more=False)
    return None


async def serve_http(port: int) -> None:
    import uvicorn

    config = uvicorn.Config(mcp.streamable_http_app(), host="127.0.0.1", port=port, log_level="warning")
    server = uvicorn.Server(config)
    async with anyio.create_task_group() as tg:
        tg.start_soon(server.serve)
        while not server.started:
            await anyio.sleep(0.05)
        bound = server.servers[0].sockets[0].getsockname()[1]
        print(f"py-server: serving http://127.0.0.1:{bound}/mcp", file=sys.stderr, flush=True)


def main() -> int:
    argv = sys.argv[1:]
    if argv[:1] == ["stdio"]:
        mcp.run("stdio")
        return 0
    if argv[:1] == ["http"]:
        port = int(argv[2]) if argv[1:2] == ["--port"] else 0
        anyio.run(serve_http, port)
        return 0
    print("usage: py-server.py stdio | http [--port P]", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
