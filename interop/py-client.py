#!/usr/bin/env python3
"""Walks our `everything` server with the official Python SDK (`mcp` on PyPI).

    .venv/bin/python py-client.py -- ../target/debug/everything --runtime tokio --transport stdio

Prints one line per check ("ok"/"FAIL"), then "N passed, M failed"; exits 1 on any failure.
The expected values are the fixtures of examples/src/everything.rs (the MCP conformance
suite's server scenarios).

The main walk uses the low-level `ClientSession` over `stdio_client` with the `initialize`
handshake. A last check connects the high-level `mcp.Client` in its default `mode="auto"`,
which first probes `server/discover` (2026-07-28) and falls back to `initialize`.
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
import re
import sys
import traceback
import warnings
from typing import Any

import anyio
import mcp.types as types
from mcp import Client, ClientSession, MCPError, StdioServerParameters, stdio_client
from mcp.client.session import ClientRequestContext

# `logging/setLevel`, `resources/subscribe` & co. are deprecated as of 2026-07-28; this walk
# speaks 2025-11-25 on purpose.
warnings.simplefilter("ignore")

PNG_1X1 = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
TIMEOUT = 15.0
LABEL = f"[{os.environ['INTEROP_LABEL']}] " if os.environ.get("INTEROP_LABEL") else ""

FIXTURE_TOOLS = [
    "test_simple_text", "test_image_content", "test_audio_content", "test_embedded_resource",
    "test_multiple_content_types", "test_tool_with_logging", "test_tool_with_progress",
    "test_error_handling", "test_sampling", "test_elicitation", "test_elicitation_sep1034_defaults",
    "test_elicitation_sep1330_enums", "json_schema_2020_12_tool", "test_reconnection", "echo", "slow", "stream",
    "touch_watched", "list_roots",
]  # fmt: skip
FIXTURE_PROMPTS = [
    "test_simple_prompt", "test_prompt_with_arguments", "test_prompt_with_embedded_resource", "test_prompt_with_image",
]  # fmt: skip


class Mismatch(Exception):
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
    """The exceptions inside (nested) exception groups, as anyio task groups raise them."""
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


class Walk:
    def __init__(self) -> None:
        self.passed = 0
        self.failed = 0

    async def check(self, name: str, fn) -> Any:
        try:
            with anyio.fail_after(TIMEOUT * 2):
                detail = await fn()
        except Exception as e:  # noqa: BLE001 - every failure is reported and counted
            self.failed += 1
            print(f"{LABEL}FAIL {name}: {describe(e)}", flush=True)
            return None
        self.passed += 1
        print(f"{LABEL}ok   {name}" + (f" ({detail})" if detail else ""), flush=True)
        return detail


# ------------------------------------------------------------------------- client callbacks
logs: list[types.LoggingMessageNotificationParams] = []
updates: list[str] = []
sampling_requests: list[dict[str, Any]] = []
elicitations: list[dict[str, Any]] = []


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
    if "username" in props:
        return types.ElicitResult(action="accept", content={"username": "bob", "email": "bob@example.com"})
    if "untitledSingle" in props:
        return types.ElicitResult(
            action="accept",
            content={
                "untitledSingle": "option1",
                "titledSingle": "value2",
                "legacyEnum": "opt3",
                "untitledMulti": ["option2"],
                "titledMulti": ["value1", "value3"],
            },
        )
    # SEP-1034: fill the defaults in ourselves (this SDK does not apply them).
    return types.ElicitResult(action="accept", content={k: v["default"] for k, v in props.items() if "default" in v})


roots: list[types.Root] = [types.Root(uri="file:///tmp/py-root", name="py-root")]


async def on_list_roots(context: ClientRequestContext) -> types.ListRootsResult:
    return types.ListRootsResult(roots=list(roots))


async def on_log(params: types.LoggingMessageNotificationParams) -> None:
    logs.append(params)


async def on_message(message) -> None:
    if isinstance(message, types.ResourceUpdatedNotification):
        updates.append(str(message.params.uri))


# ------------------------------------------------------------------------------------ walk
async def walk(session: ClientSession, w: Walk) -> bool:
    async def initialize():
        r = await session.initialize()
        caps = wire(r.capabilities)
        for cap in ("tools", "resources", "prompts", "logging", "completions"):
            expect(cap in caps, f"capability {cap} missing: {caps}")
        expect(bool(r.server_info.name), "serverInfo.name missing")
        return f"{r.server_info.name} {r.server_info.version}, protocol {r.protocol_version}"

    if await w.check("connect + initialize", initialize) is None:
        return False

    async def ping():
        await session.send_ping()

    await w.check("ping", ping)

    # ------------------------------------------------------------------------------ tools
    tools: list[types.Tool] = []

    async def list_tools():
        nonlocal tools
        r = await session.list_tools()
        tools = r.tools
        names = [t.name for t in tools]
        missing = [n for n in FIXTURE_TOOLS if n not in names]
        expect(not missing, f"missing tools {missing}; got {names}")
        for t in tools:
            expect(t.input_schema.get("type") == "object", f"{t.name}: inputSchema.type is not object")
            expect(bool(t.description), f"{t.name}: no description")
        return f"{len(tools)} tools"

    await w.check("tools/list has every fixture", list_tools)

    async def schema_2020_12():
        t = next(t for t in tools if t.name == "json_schema_2020_12_tool")
        s = t.input_schema
        expect_eq(s.get("$schema"), "https://json-schema.org/draft/2020-12/schema", "$schema")
        expect("address" in s.get("$defs", {}), f"$defs.address missing: {s}")
        expect_eq(s.get("additionalProperties"), False, "additionalProperties")

    await w.check("json_schema_2020_12_tool keeps $schema/$defs/additionalProperties", schema_2020_12)

    async def echo():
        r = await session.call_tool("echo", {"text": "héllo, wörld ✓"})
        expect(not r.is_error, f"isError: {wire(r)}")
        expect_eq(only_text(r), "héllo, wörld ✓", "echo text")

    await w.check("tools/call echo", echo)

    async def simple_text():
        r = await session.call_tool("test_simple_text", {})
        expect_eq(only_text(r), "This is a simple text response for testing.", "text")

    await w.check("tools/call test_simple_text", simple_text)

    async def image():
        r = await session.call_tool("test_image_content", {})
        expect_eq(wire(r.content), [{"type": "image", "data": PNG_1X1, "mimeType": "image/png"}], "content")
        expect(base64.b64decode(r.content[0].data)[1:4] == b"PNG", "not a PNG")

    await w.check("tools/call test_image_content", image)

    async def audio():
        r = await session.call_tool("test_audio_content", {})
        c = wire(r.content)
        expect(len(c) == 1 and c[0]["type"] == "audio" and c[0]["mimeType"] == "audio/wav", f"content {c}")
        wav = base64.b64decode(c[0]["data"])
        expect(wav[:4] == b"RIFF" and wav[8:12] == b"WAVE", "not a WAV file")

    await w.check("tools/call test_audio_content", audio)

    async def embedded():
        r = await session.call_tool("test_embedded_resource", {})
        expect_eq(
            wire(r.content),
            [
                {
                    "type": "resource",
                    "resource": {
                        "uri": "test://embedded-resource",
                        "mimeType": "text/plain",
                        "text": "This is an embedded resource content.",
                    },
                }
            ],
            "content",
        )

    await w.check("tools/call test_embedded_resource", embedded)

    async def multiple():
        r = await session.call_tool("test_multiple_content_types", {})
        c = wire(r.content)
        expect_eq([x["type"] for x in c], ["text", "image", "resource"], "types")
        expect_eq(c[0]["text"], "Multiple content types test:", "text")
        expect_eq(c[1]["mimeType"], "image/png", "image mimeType")
        expect_eq(c[2]["resource"]["uri"], "test://mixed-content-resource", "resource uri")
        expect_eq(json.loads(c[2]["resource"]["text"]), {"test": "data", "value": 123}, "resource json")

    await w.check("tools/call test_multiple_content_types", multiple)

    async def error_handling():
        r = await session.call_tool("test_error_handling", {})
        expect(r.is_error is True, f"isError not true: {wire(r)}")
        expect_eq(only_text(r), "This tool intentionally returns an error for testing", "error text")

    await w.check("tools/call test_error_handling -> isError", error_handling)

    async def unknown_tool():
        try:
            r = await session.call_tool("no_such_tool", {})
        except MCPError as e:
            return f"JSON-RPC error {e.code}"
        expect(r.is_error is True, f"neither an error response nor isError: {wire(r)}")
        return "isError result"

    await w.check("tools/call unknown tool -> error", unknown_tool)

    # -------------------------------------------------------------- logging and progress
    async def set_level_debug():
        await session.set_logging_level("debug")

    await w.check("logging/setLevel debug", set_level_debug)

    async def with_logging():
        logs.clear()
        r = await session.call_tool("test_tool_with_logging", {})
        expect_eq(only_text(r), "Tool with logging executed successfully", "text")
        await anyio.sleep(0.05)  # notifications are delivered by the session's task
        expect_eq(
            [l.data for l in logs],
            ["Tool execution started", "Tool processing data", "Tool execution completed"],
            "log data",
        )
        expect(all(l.level == "info" for l in logs), f"levels {[l.level for l in logs]}")
        return f"{len(logs)} log messages"

    await w.check("tools/call test_tool_with_logging -> notifications/message", with_logging)

    async def level_filters():
        await session.set_logging_level("error")
        logs.clear()
        await session.call_tool("test_tool_with_logging", {})
        await anyio.sleep(0.05)
        expect_eq([wire(l) for l in logs], [], "messages delivered at level error")
        await session.set_logging_level("debug")

    await w.check("logging/setLevel error filters info messages", level_filters)

    async def with_progress():
        progress: list[tuple[float, float | None, str | None]] = []

        async def on_progress(p: float, total: float | None, message: str | None) -> None:
            progress.append((p, total, message))

        r = await session.call_tool("test_tool_with_progress", {}, progress_callback=on_progress)
        text = only_text(r)
        expect(
            re.fullmatch(r"Tool with progress executed successfully \(progress token .+\)", text) is not None,
            f"text {text!r}",
        )
        expect_eq([p[0] for p in progress], [0, 50, 100], "progress values")
        expect(all(p[1] == 100 for p in progress), f"totals {progress}")
        return f"{len(progress)} progress notifications"

    await w.check("tools/call test_tool_with_progress with progress_callback", with_progress)

    async def slow():
        progress: list[tuple[float, float | None]] = []

        async def on_progress(p: float, total: float | None, message: str | None) -> None:
            progress.append((p, total))

        r = await session.call_tool("slow", {"steps": 3, "delay_ms": 10}, progress_callback=on_progress)
        expect_eq(only_text(r), "slow: done after 3 steps", "text")
        expect_eq(progress, [(1, 3), (2, 3), (3, 3)], "progress")

    await w.check("tools/call slow with progress", slow)

    async def slow_timeout():
        # The SDK gives up after the read timeout and sends notifications/cancelled.
        try:
            await session.call_tool("slow", {"steps": 100, "delay_ms": 100}, read_timeout_seconds=0.3)
        except MCPError as e:
            detail = f"MCPError {e.code}"
        else:
            raise Mismatch("the call was not abandoned")
        await session.send_ping()  # the connection survives
        return detail

    await w.check("tools/call slow abandoned on read timeout", slow_timeout)

    async def stream():
        r = await session.call_tool("stream", {"count": 3, "delay_ms": 5})
        texts = [c["text"] for c in wire(r.content) if c["type"] == "text"]
        expect_eq(texts, ["item 1 of 3", "item 2 of 3", "item 3 of 3", "stream: 3 items sent"], "texts")

    await w.check("tools/call stream", stream)

    # ----------------------------------------------------------- sampling, elicitation
    async def sampling():
        sampling_requests.clear()
        r = await session.call_tool("test_sampling", {"prompt": "What is 3+3?"})
        expect(not r.is_error, f"isError: {wire(r)}")
        expect_eq(only_text(r), "LLM response: py says: What is 3+3?", "text")
        expect_eq(len(sampling_requests), 1, "sampling requests")
        expect_eq(sampling_requests[0]["maxTokens"], 100, "maxTokens")
        expect_eq(
            sampling_requests[0]["messages"],
            [{"role": "user", "content": {"type": "text", "text": "What is 3+3?"}}],
            "messages",
        )

    await w.check("tools/call test_sampling -> sampling/createMessage", sampling)

    def parse_reply(text: str, label: str) -> Any:
        m = re.fullmatch(re.escape(label) + r": action=accept, content=(.*)", text)
        expect(m is not None, f"unexpected text {text!r}")
        return json.loads(m.group(1))

    async def elicitation():
        elicitations.clear()
        r = await session.call_tool("test_elicitation", {"message": "Who are you?"})
        expect(not r.is_error, f"isError: {wire(r)}")
        expect_eq(elicitations[0]["message"], "Who are you?", "message")
        expect_eq(elicitations[0]["requestedSchema"]["required"], ["username", "email"], "required")
        expect_eq(parse_reply(only_text(r), "User response"), {"username": "bob", "email": "bob@example.com"}, "reply")

    await w.check("tools/call test_elicitation -> elicitation/create", elicitation)

    async def elicitation_defaults():
        elicitations.clear()
        r = await session.call_tool("test_elicitation_sep1034_defaults", {})
        props = elicitations[0]["requestedSchema"]["properties"]
        expect_eq(
            {k: v.get("default") for k, v in props.items()},
            {"name": "John Doe", "age": 30, "score": 95.5, "status": "active", "verified": True},
            "defaults",
        )
        expect_eq(
            parse_reply(only_text(r), "Elicitation completed"),
            {"name": "John Doe", "age": 30, "score": 95.5, "status": "active", "verified": True},
            "reply",
        )

    await w.check("tools/call test_elicitation_sep1034_defaults", elicitation_defaults)

    async def elicitation_enums():
        elicitations.clear()
        r = await session.call_tool("test_elicitation_sep1330_enums", {})
        props = elicitations[0]["requestedSchema"]["properties"]
        expect_eq(props["legacyEnum"].get("enumNames"), ["Option One", "Option Two", "Option Three"], "enumNames")
        expect_eq(len(props["titledSingle"]["oneOf"]), 3, "oneOf")
        expect_eq(len(props["titledMulti"]["items"]["anyOf"]), 3, "anyOf")
        expect_eq(
            parse_reply(only_text(r), "Elicitation completed"),
            {
                "untitledSingle": "option1",
                "titledSingle": "value2",
                "legacyEnum": "opt3",
                "untitledMulti": ["option2"],
                "titledMulti": ["value1", "value3"],
            },
            "reply",
        )

    await w.check("tools/call test_elicitation_sep1330_enums", elicitation_enums)

    async def list_roots():
        r = await session.call_tool("list_roots", {})
        expect(not r.is_error, f"isError: {wire(r)}")
        expect_eq(json.loads(only_text(r)), ["file:///tmp/py-root"], "roots")
        roots.append(types.Root(uri="file:///tmp/py-root-2"))
        await session.send_roots_list_changed()
        again = await session.call_tool("list_roots", {})
        expect_eq(json.loads(only_text(again)), ["file:///tmp/py-root", "file:///tmp/py-root-2"], "roots")

    await w.check("tools/call list_roots -> roots/list", list_roots)

    async def reconnection():
        r = await session.call_tool("test_reconnection", {})
        expect(only_text(r).startswith("Reconnection test completed successfully"), f"text {only_text(r)!r}")

    await w.check("tools/call test_reconnection", reconnection)

    # -------------------------------------------------------------------------- resources
    async def list_resources():
        r = await session.list_resources()
        uris = [str(x.uri) for x in r.resources]
        for u in ("test://static-text", "test://static-binary", "test://watched-resource"):
            expect(u in uris, f"{u} missing from {uris}")
        st = next(x for x in r.resources if str(x.uri) == "test://static-text")
        expect_eq(st.mime_type, "text/plain", "mimeType")
        return f"{len(uris)} resources"

    await w.check("resources/list", list_resources)

    async def read_static_text():
        r = await session.read_resource("test://static-text")
        expect_eq(
            wire(r.contents),
            [
                {
                    "uri": "test://static-text",
                    "mimeType": "text/plain",
                    "text": "This is the content of the static text resource.",
                }
            ],
            "contents",
        )

    await w.check("resources/read test://static-text", read_static_text)

    async def read_static_binary():
        r = await session.read_resource("test://static-binary")
        expect_eq(
            wire(r.contents), [{"uri": "test://static-binary", "mimeType": "image/png", "blob": PNG_1X1}], "contents"
        )

    await w.check("resources/read test://static-binary", read_static_binary)

    async def templates():
        r = await session.list_resource_templates()
        t = [x for x in r.resource_templates if x.uri_template == "test://template/{id}/data"]
        expect(len(t) == 1, f"template missing: {wire(r.resource_templates)}")
        expect_eq(t[0].mime_type, "application/json", "mimeType")

    await w.check("resources/templates/list", templates)

    async def read_template():
        r = await session.read_resource("test://template/42/data")
        c = wire(r.contents)
        expect_eq(len(c), 1, "contents")
        expect_eq(c[0]["uri"], "test://template/42/data", "uri")
        expect_eq(c[0]["mimeType"], "application/json", "mimeType")
        expect_eq(json.loads(c[0]["text"]), {"id": "42", "templateTest": True, "data": "Data for ID: 42"}, "json")

    await w.check("resources/read test://template/42/data", read_template)

    async def read_unknown():
        try:
            await session.read_resource("test://no-such-resource")
        except MCPError as e:
            return f"JSON-RPC error {e.code}"
        raise Mismatch("no error for an unknown resource")

    await w.check("resources/read unknown URI -> JSON-RPC error", read_unknown)

    async def subscribe():
        updates.clear()
        await session.subscribe_resource("test://watched-resource")
        r = await session.call_tool("touch_watched", {})
        expect(
            re.fullmatch(
                r"test://watched-resource is now at revision \d+; 1 subscribed connection\(s\) notified", only_text(r)
            )
            is not None,
            f"text {only_text(r)!r}",
        )
        for _ in range(50):
            if updates:
                break
            await anyio.sleep(0.02)
        expect_eq(updates, ["test://watched-resource"], "updates")
        read = await session.read_resource("test://watched-resource")
        expect(
            re.fullmatch(r"Watched resource content \(revision \d+\)", read.contents[0].text) is not None,
            f"text {read.contents[0].text!r}",
        )
        await session.unsubscribe_resource("test://watched-resource")

    await w.check("resources/subscribe + touch_watched -> notifications/resources/updated", subscribe)

    # ---------------------------------------------------------------------------- prompts
    async def list_prompts():
        r = await session.list_prompts()
        names = [p.name for p in r.prompts]
        missing = [n for n in FIXTURE_PROMPTS if n not in names]
        expect(not missing, f"missing prompts {missing}; got {names}")
        p = next(p for p in r.prompts if p.name == "test_prompt_with_arguments")
        expect_eq([(a.name, a.required) for a in p.arguments], [("arg1", True), ("arg2", True)], "arguments")

    await w.check("prompts/list", list_prompts)

    async def simple_prompt():
        r = await session.get_prompt("test_simple_prompt")
        expect_eq(
            wire(r.messages),
            [{"role": "user", "content": {"type": "text", "text": "This is a simple prompt for testing."}}],
            "messages",
        )

    await w.check("prompts/get test_simple_prompt", simple_prompt)

    async def prompt_args():
        r = await session.get_prompt("test_prompt_with_arguments", {"arg1": "gamma", "arg2": "delta"})
        expect_eq(
            wire(r.messages),
            [{"role": "user", "content": {"type": "text", "text": "Prompt with arguments: arg1='gamma', arg2='delta'"}}],
            "messages",
        )

    await w.check("prompts/get test_prompt_with_arguments", prompt_args)

    async def prompt_missing_arg():
        try:
            await session.get_prompt("test_prompt_with_arguments", {"arg2": "delta"})
        except MCPError as e:
            return f"JSON-RPC error {e.code}"
        raise Mismatch("no error for a missing required argument")

    await w.check("prompts/get test_prompt_with_arguments without a required argument -> error", prompt_missing_arg)

    async def prompt_embedded():
        r = await session.get_prompt("test_prompt_with_embedded_resource", {"resourceUri": "test://example-resource"})
        m = wire(r.messages)
        expect_eq(len(m), 2, "messages")
        expect_eq(m[0]["content"]["type"], "resource", "type")
        expect_eq(m[0]["content"]["resource"]["uri"], "test://example-resource", "uri")
        expect_eq(m[0]["content"]["resource"]["text"], "Embedded resource content for testing.", "text")
        expect_eq(m[1]["content"]["text"], "Please process the embedded resource above.", "text")

    await w.check("prompts/get test_prompt_with_embedded_resource", prompt_embedded)

    async def prompt_image():
        r = await session.get_prompt("test_prompt_with_image")
        m = wire(r.messages)
        expect_eq(m[0]["content"], {"type": "image", "data": PNG_1X1, "mimeType": "image/png"}, "image")
        expect_eq(m[1]["content"]["text"], "Please analyze the image above.", "text")

    await w.check("prompts/get test_prompt_with_image", prompt_image)

    # ------------------------------------------------------------------------- completion
    async def complete_arg1():
        r = await session.complete(
            types.PromptReference(name="test_prompt_with_arguments"), {"name": "arg1", "value": "pa"}
        )
        expect_eq(r.completion.values, ["paris", "park", "party"], "values")
        expect_eq(r.completion.total, 3, "total")
        expect_eq(r.completion.has_more, False, "hasMore")

    await w.check('completion/complete ref/prompt arg1 "pa"', complete_arg1)

    async def complete_arg2():
        r = await session.complete(
            types.PromptReference(name="test_prompt_with_arguments"),
            {"name": "arg2", "value": "test"},
            context_arguments={"arg1": "paris"},
        )
        expect_eq(r.completion.values, ["testValue2"], "values")

    await w.check("completion/complete ref/prompt arg2 with context", complete_arg2)

    async def complete_template():
        r = await session.complete(
            types.ResourceTemplateReference(uri="test://template/{id}/data"), {"name": "id", "value": "12"}
        )
        expect_eq(r.completion.values, ["123"], "values")

    await w.check("completion/complete ref/resource template {id}", complete_template)

    await w.check("ping after walk", ping)
    return True


async def auto_mode(params: StdioServerParameters, w: Walk) -> None:
    async def connect_auto():
        async with Client(params, read_timeout_seconds=TIMEOUT) as client:
            version = client.protocol_version
            r = await client.call_tool("echo", {"text": "auto"})
            expect_eq(only_text(r), "auto", "echo text")
            return f"negotiated {version}"

    await w.check("mcp.Client mode=auto (server/discover probe, then fallback) + echo", connect_auto)


async def main() -> int:
    argv = sys.argv[1:]
    if "--" in argv:
        argv = argv[argv.index("--") + 1 :]
    if not argv:
        print("usage: py-client.py -- <server command> [args...]", file=sys.stderr)
        return 2
    params = StdioServerParameters(command=argv[0], args=argv[1:])
    w = Walk()
    try:
        with anyio.fail_after(120):
            async with stdio_client(params) as (read, write):
                async with ClientSession(
                    read,
                    write,
                    read_timeout_seconds=TIMEOUT,
                    sampling_callback=on_sampling,
                    elicitation_callback=on_elicitation,
                    list_roots_callback=on_list_roots,
                    logging_callback=on_log,
                    message_handler=on_message,
                    client_info=types.Implementation(name="interop-py-client", version="1.0.0"),
                ) as session:
                    connected = await walk(session, w)
            if connected:
                print(f"{LABEL}ok   close", flush=True)
                w.passed += 1
                await auto_mode(params, w)
    except Exception as e:  # noqa: BLE001
        w.failed += 1
        print(f"{LABEL}FAIL unexpected: {describe(e)}", flush=True)
    print(f"{LABEL}{w.passed} passed, {w.failed} failed", flush=True)
    return 1 if w.failed else 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
