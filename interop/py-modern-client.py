#!/usr/bin/env python3
"""Walks our `everything` server (served with `--eras both`) with the official Python SDK's
high-level `mcp.Client` in the stateless era, protocol 2026-07-28, over stdio or Streamable HTTP.

    .venv/bin/python py-modern-client.py --mode 2026-07-28 -- ../target/debug/everything --eras both --transport stdio
    .venv/bin/python py-modern-client.py --mode auto --url http://127.0.0.1:PORT/mcp

`--mode 2026-07-28` is `Client(mode="2026-07-28")`: the SDK adopts that version without any
`server/discover` (it synthesizes the discover result, so no serverInfo); `--mode auto` is
`Client(mode="auto")`: `server/discover` first, the handshake only on a legacy verdict (this walk
then requires 2026-07-28). `input_required` rounds (MRTR) are answered through the client's
sampling, elicitation and roots callbacks.

Prints one line per check ("ok"/"FAIL"/"SKIP"), then "N passed, M failed" (", K skipped" when a
step was skipped); exits 1 on any failure. The expected values are the fixtures of
examples/src/everything.rs. `subscriptions/listen` is required: a server answering it with -32601
(method not found) fails the step, or makes it a SKIP with INTEROP_REQUIRE_LISTEN=0 (for a tree
from before the server had it).
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import traceback
import warnings
from typing import Any

import anyio
import httpx2
import mcp.types as types
from mcp import Client, MCPError, StdioServerParameters
from mcp.client.session import ClientRequestContext
from mcp.client.streamable_http import streamable_http_client

# Sampling and roots are deprecated as of 2026-07-28 (still functional); this walk uses them.
warnings.simplefilter("ignore")

VERSION = "2026-07-28"
PV_KEY = "io.modelcontextprotocol/protocolVersion"
CAPS_KEY = "io.modelcontextprotocol/clientCapabilities"
INFO_KEY = "io.modelcontextprotocol/clientInfo"
LOG_LEVEL_KEY = "io.modelcontextprotocol/logLevel"
PNG_1X1 = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
TIMEOUT = 15.0
ROOT_URI = "file:///tmp/py-modern-root"
LABEL = f"[{os.environ['INTEROP_LABEL']}] " if os.environ.get("INTEROP_LABEL") else ""
REQUIRE_LISTEN = os.environ.get("INTEROP_REQUIRE_LISTEN") != "0"

FIXTURE_TOOLS = [
    "echo", "test_simple_text", "test_image_content", "test_error_handling", "test_tool_with_progress",
    "test_logging_tool", "test_custom_headers", "touch_watched",
    "test_input_required_result_elicitation", "test_input_required_result_sampling",
    "test_input_required_result_list_roots", "test_input_required_result_request_state",
    "test_input_required_result_multiple_inputs", "test_input_required_result_multi_round",
    "test_input_required_result_tampered_state",
]  # fmt: skip
FIXTURE_PROMPTS = ["test_simple_prompt", "test_prompt_with_arguments", "test_input_required_result_prompt"]


class Mismatch(Exception):
    pass


class Skip(Exception):
    pass


def expect(cond: bool, msg: str) -> None:
    if not cond:
        raise Mismatch(msg)


def expect_eq(actual: Any, expected: Any, what: str = "value") -> None:
    if actual != expected:
        raise Mismatch(f"{what}: expected {expected!r}, got {actual!r}")


def wire(model: Any) -> Any:
    """A pydantic model as the JSON it was on the wire."""
    if isinstance(model, list):
        return [wire(m) for m in model]
    return model.model_dump(by_alias=True, mode="json", exclude_none=True)


def only_text(result: types.CallToolResult) -> str:
    content = wire(result.content)
    expect(len(content) == 1 and content[0]["type"] == "text", f"expected one text item, got {content}")
    return content[0]["text"]


def leaves(e: BaseException) -> list[BaseException]:
    if isinstance(e, BaseExceptionGroup):
        return [leaf for sub in e.exceptions for leaf in leaves(sub)]
    return [e]


def describe(e: BaseException) -> str:
    parts = []
    for leaf in leaves(e):
        if isinstance(leaf, Mismatch):
            parts.append(str(leaf))
        elif isinstance(leaf, MCPError):
            parts.append(f"MCPError {leaf.code}: {leaf}")
        elif isinstance(leaf, TimeoutError):
            parts.append("timed out")
        else:
            parts.append("".join(traceback.format_exception(leaf)).rstrip())
    return "; ".join(parts)


async def error_code(coro) -> int:
    """The MCPError code a call fails with (a Mismatch when it succeeds)."""
    try:
        r = await coro
    except MCPError as e:
        return e.code
    raise Mismatch(f"expected a JSON-RPC error, got {wire(r) if hasattr(r, 'model_dump') else r!r}")


class Walk:
    def __init__(self) -> None:
        self.passed = 0
        self.failed = 0
        self.skipped = 0

    async def check(self, name: str, fn) -> Any:
        try:
            with anyio.fail_after(TIMEOUT * 2):
                detail = await fn()
        except Skip as e:
            self.skipped += 1
            print(f"{LABEL}SKIP {name}: {e}", flush=True)
            return None
        except Exception as e:  # noqa: BLE001 - every failure is reported and counted
            self.failed += 1
            print(f"{LABEL}FAIL {name}: {describe(e)}", flush=True)
            return None
        self.passed += 1
        print(f"{LABEL}ok   {name}" + (f" ({detail})" if detail else ""), flush=True)
        return detail or True


# ------------------------------------------------------------------------- client callbacks
logs: list[types.LoggingMessageNotificationParams] = []
sampling_requests: list[dict[str, Any]] = []
elicitations: list[dict[str, Any]] = []
roots_asked = 0
ANSWERS: dict[str, Any] = {"name": "Grace", "color": "amber", "context": "interop-py", "ok": True}


async def on_sampling(context: ClientRequestContext, params: types.CreateMessageRequestParams):
    sampling_requests.append(wire(params))
    first = wire(params.messages[0])["content"]
    prompt = first.get("text") if isinstance(first, dict) else json.dumps(first)
    return types.CreateMessageResult(
        role="assistant",
        content=types.TextContent(type="text", text=f"py says: {prompt}"),
        model="interop-py-model",
        stop_reason="endTurn",
    )


async def on_elicitation(context: ClientRequestContext, params: types.ElicitRequestParams):
    p = wire(params)
    elicitations.append(p)
    props = p.get("requestedSchema", {}).get("properties", {})
    return types.ElicitResult(action="accept", content={k: ANSWERS[k] for k in props if k in ANSWERS})


async def on_list_roots(context: ClientRequestContext) -> types.ListRootsResult:
    global roots_asked
    roots_asked += 1
    return types.ListRootsResult(roots=[types.Root(uri=ROOT_URI, name="py-modern-root")])


async def on_log(params: types.LoggingMessageNotificationParams) -> None:
    logs.append(params)


# Over HTTP: every request's headers and JSON body, and the response's headers.
exchanges: list[dict[str, Any]] = []


async def on_http_request(request: httpx2.Request) -> None:
    try:
        body = json.loads(request.content) if request.content else None
    except (ValueError, httpx2.RequestNotRead):
        body = None
    exchanges.append({"method": request.method, "headers": dict(request.headers), "body": body, "response": None})


async def on_http_response(response: httpx2.Response) -> None:
    for x in reversed(exchanges):
        if x["response"] is None:
            x["response"] = {"status": response.status_code, "headers": dict(response.headers)}
            break


# ------------------------------------------------------------------------------------ walk
async def walk(c: Client, w: Walk, mode: str, http: bool) -> None:
    async def connected():
        expect_eq(c.protocol_version, VERSION, "negotiated protocol version")
        if mode == "auto":
            info = c.server_info
            expect(info is not None and info.name == "mcp-everything", f"serverInfo: {info}")
            caps = wire(c.server_capabilities)
            for cap in ("tools", "resources", "prompts", "completions"):
                expect(cap in caps, f"capability {cap} missing: {caps}")
            expect(bool(c.instructions), "no instructions")
            return f"{info.name} {info.version} via server/discover, protocol {c.protocol_version}"
        # A version pin adopts a synthesized discover result: nothing about the server is known.
        expect(c.server_info is None, f"serverInfo without a discover: {c.server_info}")
        return f"protocol {c.protocol_version} adopted without server/discover"

    if await w.check(f"connect (mode={mode!r})", connected) is None:
        return

    # ------------------------------------------------------------------------------ tools
    async def list_tools():
        r = await c.list_tools(cache_mode="refresh")
        names = [t.name for t in r.tools]
        missing = [n for n in FIXTURE_TOOLS if n not in names]
        expect(not missing, f"missing tools {missing}; got {names}")
        for t in r.tools:
            expect(t.input_schema.get("type") == "object", f"{t.name}: inputSchema.type is not object")
        d = wire(r)
        expect(isinstance(d.get("ttlMs"), int), f"ttlMs: {d.get('ttlMs')}")
        expect(d.get("cacheScope") in ("public", "private"), f"cacheScope: {d.get('cacheScope')}")
        return f"{len(names)} tools, ttlMs {d['ttlMs']}, cacheScope {d['cacheScope']}"

    await w.check("tools/list has the fixtures (ttlMs, cacheScope)", list_tools)

    async def echo():
        r = await c.call_tool("echo", {"text": "héllo, wörld ✓ py 2026"})
        expect_eq(wire(r.content), [{"type": "text", "text": "héllo, wörld ✓ py 2026"}], "content")
        expect(not r.is_error, "isError")

    await w.check("tools/call echo", echo)

    async def simple_text():
        r = await c.call_tool("test_simple_text", {})
        expect_eq(only_text(r), "This is a simple text response for testing.", "text")

    await w.check("tools/call test_simple_text", simple_text)

    async def image():
        r = await c.call_tool("test_image_content", {})
        expect_eq(wire(r.content), [{"type": "image", "data": PNG_1X1, "mimeType": "image/png"}], "content")

    await w.check("tools/call test_image_content", image)

    async def error_handling():
        r = await c.call_tool("test_error_handling", {})
        expect(r.is_error is True, f"isError not true: {wire(r)}")
        expect_eq(only_text(r), "This tool intentionally returns an error for testing", "text")

    await w.check("tools/call test_error_handling -> isError", error_handling)

    async def unknown_tool():
        expect_eq(await error_code(c.call_tool("no_such_tool", {})), -32602, "code")

    await w.check("tools/call unknown tool -> -32602", unknown_tool)

    async def custom_headers():
        before = len(exchanges)
        r = await c.call_tool("test_custom_headers", {"region": "ap-south", "priority": 7, "query": "q"})
        expect_eq(only_text(r), 'region="ap-south" priority=7 query="q"', "text")
        if not http:
            return "stdio: no headers"
        posts = [x for x in exchanges[before:] if (x["body"] or {}).get("method") == "tools/call"]
        expect(bool(posts), "no tools/call POST recorded")
        h = posts[-1]["headers"]
        expect_eq(h.get("mcp-param-region"), "ap-south", "Mcp-Param-Region")
        expect_eq(h.get("mcp-param-priority"), "7", "Mcp-Param-Priority")
        expect_eq(h.get("mcp-param-query"), None, "Mcp-Param-Query (not annotated)")
        return f"Mcp-Param-Region: ap-south, Mcp-Param-Priority: 7; {len(posts)} POST(s)"

    await w.check("tools/call test_custom_headers (x-mcp-header arguments)", custom_headers)

    # -------------------------------------------------------------- logging and progress
    async def logging_none():
        logs.clear()
        r = await c.call_tool("test_logging_tool", {})
        expect_eq(only_text(r), "logged at info, warning and error", "text")
        await anyio.sleep(0.05)
        expect_eq([wire(x) for x in logs], [], "log messages")

    await w.check("tools/call test_logging_tool without a logLevel -> no notifications/message", logging_none)

    async def logging_warning():
        logs.clear()
        r = await c.call_tool("test_logging_tool", {}, meta={LOG_LEVEL_KEY: "warning"})
        expect_eq(only_text(r), "logged at info, warning and error", "text")
        for _ in range(25):
            if len(logs) >= 2:
                break
            await anyio.sleep(0.02)
        got = [(x.level, x.data) for x in logs]
        expect_eq(got, [("warning", "logging tool: warning"), ("error", "logging tool: error")], "log messages")
        return f"{len(got)} log messages"

    await w.check(f"tools/call test_logging_tool with _meta {LOG_LEVEL_KEY} warning", logging_warning)

    async def progress():
        seen: list[tuple[float, float | None]] = []

        async def on_progress(p: float, total: float | None, message: str | None) -> None:
            seen.append((p, total))

        r = await c.call_tool("test_tool_with_progress", {}, progress_callback=on_progress)
        expect(only_text(r).startswith("Tool with progress executed successfully"), f"text: {only_text(r)}")
        expect_eq(seen, [(0, 100), (50, 100), (100, 100)], "progress")
        return f"{len(seen)} progress notifications"

    await w.check("tools/call test_tool_with_progress with progress_callback", progress)

    # ------------------------------------------------------------ MRTR (input_required)
    async def mrtr_elicitation():
        elicitations.clear()
        r = await c.call_tool("test_input_required_result_elicitation", {})
        expect_eq(only_text(r), "Hello, Grace!", "text")
        expect_eq(len(elicitations), 1, "elicitation callback calls")
        expect_eq(elicitations[0]["message"], "What is your name?", "message")

    await w.check("MRTR tools/call test_input_required_result_elicitation (elicitation callback)", mrtr_elicitation)

    async def mrtr_sampling():
        sampling_requests.clear()
        r = await c.call_tool("test_input_required_result_sampling", {})
        expect_eq(only_text(r), "Model answered: py says: What is the capital of France?", "text")
        expect_eq(len(sampling_requests), 1, "sampling callback calls")
        expect_eq(sampling_requests[0]["maxTokens"], 100, "maxTokens")

    await w.check("MRTR tools/call test_input_required_result_sampling (sampling callback)", mrtr_sampling)

    async def mrtr_roots():
        global roots_asked
        roots_asked = 0
        r = await c.call_tool("test_input_required_result_list_roots", {})
        expect_eq(only_text(r), f"Client roots: {ROOT_URI}", "text")
        expect_eq(roots_asked, 1, "roots callback calls")

    await w.check("MRTR tools/call test_input_required_result_list_roots (roots callback)", mrtr_roots)

    async def mrtr_multi_round():
        elicitations.clear()
        r = await c.call_tool("test_input_required_result_multi_round", {})
        expect_eq(only_text(r), "Grace likes amber", "text")
        expect_eq(
            [e["message"] for e in elicitations],
            ["Step 1: What is your name?", "Step 2: What is your favorite color?"],
            "asked",
        )

    await w.check("MRTR tools/call test_input_required_result_multi_round (two rounds)", mrtr_multi_round)

    async def mrtr_multiple():
        global roots_asked
        elicitations.clear()
        sampling_requests.clear()
        roots_asked = 0
        r = await c.call_tool("test_input_required_result_multiple_inputs", {})
        expect_eq(only_text(r), "name=Grace, greeting=py says: Generate a greeting, roots=1", "text")
        expect_eq((len(elicitations), len(sampling_requests), roots_asked), (1, 1, 1), "callback calls")

    await w.check("MRTR tools/call test_input_required_result_multiple_inputs (one round, three asks)", mrtr_multiple)

    async def mrtr_state():
        r = await c.call_tool("test_input_required_result_request_state", {})
        expect_eq(only_text(r), "state-ok: confirmed ok=true", "text")

    await w.check("MRTR tools/call test_input_required_result_request_state (sealed requestState)", mrtr_state)

    answers = {"confirm": types.ElicitResult(action="accept", content={"ok": True})}

    async def mrtr_manual():
        name = "test_input_required_result_tampered_state"
        first = await c.session.call_tool(name, {}, allow_input_required=True)
        expect(isinstance(first, types.InputRequiredResult), f"not input_required: {wire(first)}")
        d = wire(first)
        expect_eq(d["inputRequests"]["confirm"]["method"], "elicitation/create", "inputRequests.confirm.method")
        state = first.request_state
        expect(isinstance(state, str), f"requestState: {state!r}")
        r = await c.session.call_tool(
            name, {}, input_responses=answers, request_state=state, allow_input_required=True
        )
        expect(isinstance(r, types.CallToolResult), f"retry: {wire(r)}")
        expect_eq(only_text(r), "confirmed ok=true", "text")
        return f"requestState {len(state)} chars"

    await w.check("MRTR manual (allow_input_required): round 1, retry with the answers -> complete", mrtr_manual)

    async def mrtr_tampered():
        name = "test_input_required_result_tampered_state"
        first = await c.session.call_tool(name, {}, allow_input_required=True)
        state = first.request_state
        expect(isinstance(state, str), f"requestState: {wire(first)}")
        i = len(state) // 2
        tampered = state[:i] + ("B" if state[i] == "A" else "A") + state[i + 1 :]
        code = await error_code(
            c.session.call_tool(name, {}, input_responses=answers, request_state=tampered, allow_input_required=True)
        )
        return f"error {code}"

    await w.check("MRTR manual: a tampered requestState -> JSON-RPC error", mrtr_tampered)

    async def mrtr_prompt():
        elicitations.clear()
        r = await c.get_prompt("test_input_required_result_prompt")
        expect_eq(
            wire(r.messages),
            [{"role": "user", "content": {"type": "text", "text": "Answer with this context in mind: interop-py"}}],
            "messages",
        )
        expect_eq(len(elicitations), 1, "elicitation callback calls")

    await w.check("MRTR prompts/get test_input_required_result_prompt (elicitation callback)", mrtr_prompt)

    # ------------------------------------------------------------------------- resources
    async def list_resources():
        r = await c.list_resources(cache_mode="refresh")
        uris = [str(x.uri) for x in r.resources]
        for u in ("test://static-text", "test://static-binary", "test://watched-resource"):
            expect(u in uris, f"{u} missing from {uris}")
        return f"{len(uris)} resources"

    await w.check("resources/list", list_resources)

    async def read_text():
        r = await c.read_resource("test://static-text", cache_mode="bypass")
        d = wire(r)
        expect_eq(
            d["contents"],
            [{"uri": "test://static-text", "mimeType": "text/plain", "text": "This is the content of the static text resource."}],
            "contents",
        )
        expect(isinstance(d.get("ttlMs"), int), f"ttlMs: {d}")
        expect(d.get("cacheScope") in ("public", "private"), f"cacheScope: {d}")

    await w.check("resources/read test://static-text (ttlMs, cacheScope)", read_text)

    async def read_blob():
        r = await c.read_resource("test://static-binary", cache_mode="bypass")
        expect_eq(wire(r.contents), [{"uri": "test://static-binary", "mimeType": "image/png", "blob": PNG_1X1}], "contents")

    await w.check("resources/read test://static-binary", read_blob)

    async def template():
        t = await c.list_resource_templates()
        expect(
            any(x.uri_template == "test://template/{id}/data" for x in t.resource_templates), f"templates: {wire(t)}"
        )
        r = await c.read_resource("test://template/42/data", cache_mode="bypass")
        expect_eq(json.loads(r.contents[0].text), {"id": "42", "templateTest": True, "data": "Data for ID: 42"}, "data")

    await w.check("resources/templates/list + read test://template/42/data", template)

    async def unknown_resource():
        code = await error_code(c.read_resource("test://no-such-resource", cache_mode="bypass"))
        expect_eq(code, -32602, "code")

    await w.check("resources/read unknown URI -> -32602 (2026-07-28 resource not found)", unknown_resource)

    # --------------------------------------------------------------------------- prompts
    async def list_prompts():
        r = await c.list_prompts(cache_mode="refresh")
        names = [p.name for p in r.prompts]
        missing = [n for n in FIXTURE_PROMPTS if n not in names]
        expect(not missing, f"missing prompts {missing}; got {names}")
        p = next(p for p in r.prompts if p.name == "test_prompt_with_arguments")
        expect_eq([(a.name, a.required) for a in p.arguments or []], [("arg1", True), ("arg2", True)], "arguments")
        return f"{len(names)} prompts"

    await w.check("prompts/list", list_prompts)

    async def simple_prompt():
        r = await c.get_prompt("test_simple_prompt")
        expect_eq(
            wire(r.messages),
            [{"role": "user", "content": {"type": "text", "text": "This is a simple prompt for testing."}}],
            "messages",
        )

    await w.check("prompts/get test_simple_prompt", simple_prompt)

    async def args_prompt():
        r = await c.get_prompt("test_prompt_with_arguments", {"arg1": "alpha", "arg2": "beta"})
        expect_eq(
            wire(r.messages),
            [{"role": "user", "content": {"type": "text", "text": "Prompt with arguments: arg1='alpha', arg2='beta'"}}],
            "messages",
        )

    await w.check("prompts/get test_prompt_with_arguments", args_prompt)

    async def missing_arg():
        await error_code(c.get_prompt("test_prompt_with_arguments", {"arg1": "alpha"}))

    await w.check("prompts/get without a required argument -> error", missing_arg)

    # ------------------------------------------------------------------------ completion
    async def complete_arg1():
        r = await c.complete(types.PromptReference(name="test_prompt_with_arguments"), {"name": "arg1", "value": "pa"})
        expect_eq(r.completion.values, ["paris", "park", "party"], "values")
        expect_eq(r.completion.total, 3, "total")

    await w.check('completion/complete ref/prompt arg1 "pa"', complete_arg1)

    async def complete_ctx():
        r = await c.complete(
            types.PromptReference(name="test_prompt_with_arguments"),
            {"name": "arg2", "value": "w"},
            context_arguments={"arg1": "paris"},
        )
        expect_eq(r.completion.values, ["world"], "values")

    await w.check("completion/complete ref/prompt arg2 with context", complete_ctx)

    async def complete_template():
        r = await c.complete(
            types.ResourceTemplateReference(uri="test://template/{id}/data"), {"name": "id", "value": "4"}
        )
        expect_eq(r.completion.values, ["42"], "values")

    await w.check("completion/complete ref/resource template {id}", complete_template)

    # ---------------------------------------------------------------- subscriptions/listen
    async def listen():
        try:
            cm = c.listen(resource_subscriptions=["test://watched-resource"])
            sub = await cm.__aenter__()
        except MCPError as e:
            if e.code == -32601 and not REQUIRE_LISTEN:
                raise Skip(f"the server does not implement subscriptions/listen yet (MCPError -32601: {e})") from e
            raise
        try:
            expect_eq(list(sub.honored.resource_subscriptions or []), ["test://watched-resource"], "honored filter")
            await c.call_tool("touch_watched", {})
            with anyio.fail_after(5):
                event = await sub.__anext__()
            expect_eq(getattr(event, "uri", None), "test://watched-resource", f"event {event!r}")
        finally:
            await cm.__aexit__(None, None, None)

    await w.check("subscriptions/listen + touch_watched -> resource updated event", listen)

    # ------------------------------------------------------------------- the wire (HTTP)
    if http:

        async def headers():
            posts = [x for x in exchanges if x["method"] == "POST" and (x["body"] or {}).get("method")]
            expect(len(posts) > 10, f"{len(posts)} POSTs")
            methods = set()
            for x in posts:
                body, h = x["body"], x["headers"]
                m = body["method"]
                methods.add(m)
                if "id" not in body:
                    continue
                expect(m not in ("initialize",), "initialize was sent")
                meta = (body.get("params") or {}).get("_meta") or {}
                expect_eq(meta.get(PV_KEY), VERSION, f"{m}: _meta protocolVersion")
                expect(isinstance(meta.get(CAPS_KEY), dict), f"{m}: _meta clientCapabilities")
                expect(isinstance(meta.get(INFO_KEY), dict), f"{m}: _meta clientInfo")
                expect_eq(h.get("mcp-protocol-version"), VERSION, f"{m}: MCP-Protocol-Version")
                expect_eq(h.get("mcp-method"), m, f"{m}: Mcp-Method")
                params = body.get("params") or {}
                name = params.get("uri") if m == "resources/read" else params.get("name") if m in ("tools/call", "prompts/get") else None
                if name is not None:
                    expect_eq(h.get("mcp-name"), name, f"{m}: Mcp-Name")
                expect("mcp-session-id" not in h, f"{m}: the client sent Mcp-Session-Id")
                resp = x["response"] or {"headers": {}}
                expect("mcp-session-id" not in resp["headers"], f"{m}: the server answered with Mcp-Session-Id")
            others = sorted({x["method"] for x in exchanges if x["method"] != "POST"})
            expect_eq(others, [], "GET/DELETE requests in the stateless era")
            return f"{len(posts)} POSTs: {' '.join(sorted(methods))}"

        await w.check(
            "HTTP: the _meta envelope, MCP-Protocol-Version, Mcp-Method and Mcp-Name on every request; no session",
            headers,
        )


async def main() -> int:
    argv = sys.argv[1:]
    mode = VERSION
    if argv[:1] == ["--mode"]:
        if len(argv) < 2 or argv[1] not in (VERSION, "auto"):
            print(f"py-modern-client: --mode takes {VERSION} or auto", file=sys.stderr)
            return 2
        mode, argv = argv[1], argv[2:]
    http = argv[:1] == ["--url"]
    if http:
        if len(argv) != 2:
            print("py-modern-client: --url takes exactly one URL", file=sys.stderr)
            return 2
        http_client = httpx2.AsyncClient(
            timeout=httpx2.Timeout(30.0, read=300.0),
            event_hooks={"request": [on_http_request], "response": [on_http_response]},
        )
        server: Any = streamable_http_client(argv[1], http_client=http_client)
    else:
        if "--" in argv:
            argv = argv[argv.index("--") + 1 :]
        if not argv:
            print(
                "usage: py-modern-client.py [--mode 2026-07-28|auto] (-- <server command> [args...] | --url URL)",
                file=sys.stderr,
            )
            return 2
        server = StdioServerParameters(command=argv[0], args=argv[1:])
    w = Walk()
    try:
        with anyio.fail_after(120):
            async with Client(
                server,
                mode=mode,
                read_timeout_seconds=TIMEOUT,
                sampling_callback=on_sampling,
                elicitation_callback=on_elicitation,
                list_roots_callback=on_list_roots,
                logging_callback=on_log,
                client_info=types.Implementation(name="interop-py-modern-client", version="1.0.0"),
            ) as c:
                await walk(c, w, mode, http)
        print(f"{LABEL}ok   close", flush=True)
        w.passed += 1
    except Exception as e:  # noqa: BLE001
        w.failed += 1
        print(f"{LABEL}FAIL unexpected: {describe(e)}", flush=True)
    finally:
        if http:
            await http_client.aclose()
    skipped = f", {w.skipped} skipped" if w.skipped else ""
    print(f"{LABEL}{w.passed} passed, {w.failed} failed{skipped}", flush=True)
    return 1 if w.failed else 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
