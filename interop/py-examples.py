"""Walks one of the copyable examples (examples/src/bin) with the official Python SDK client, by
the steps `examples.json` lists for it (the same steps as ts-examples.mjs).

    .venv/bin/python py-examples.py NAME -- <server command> [args...]         (stdio)
    .venv/bin/python py-examples.py NAME --url URL [--header 'Name: value']... (Streamable HTTP)
    .venv/bin/python py-examples.py NAME --url URL --refused                   (must be refused)

Prints one line per check ("ok"/"FAIL"), then "N passed, M failed"; exits 1 on any failure.
"""

from __future__ import annotations

import json
import pathlib
import sys
import traceback
from typing import Any

import anyio
import httpx2
from mcp import Client, MCPError, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

TIMEOUT = 15.0


class Walk:
    def __init__(self) -> None:
        self.passed = 0
        self.failed = 0

    async def check(self, label: str, fn: Any) -> None:
        try:
            detail = await fn()
            self.passed += 1
            print(f"ok   {label}" + (f" ({detail})" if detail else ""), flush=True)
        except Exception as e:  # noqa: BLE001
            self.failed += 1
            print(f"FAIL {label}: {e!r}", flush=True)


def first_text(content: list[Any]) -> str:
    for c in content or []:
        if getattr(c, "type", None) == "text":
            return c.text
    return ""


async def walk(c: Client, name: str, steps: list[dict[str, Any]], w: Walk) -> None:
    for step in steps:
        if "tools" in step:
            async def tools(step=step):
                listed = (await c.list_tools()).tools
                assert sorted(t.name for t in listed) == sorted(step["tools"]), [t.name for t in listed]
                for t in listed:
                    assert t.input_schema.get("type") == "object", t.input_schema
            await w.check(f"tools/list = {step['tools']}", tools)
        elif "call" in step:
            async def call(step=step):
                r = await c.call_tool(step["call"], step["args"])
                assert not r.is_error, r
                if "text" in step:
                    assert step["text"] in first_text(r.content), r.content
                if "structured" in step:
                    assert r.structured_content == step["structured"], r.structured_content
            await w.check(f"tools/call {step['call']} {json.dumps(step['args'])}", call)
        elif "call_error" in step:
            async def call_error(step=step):
                try:
                    r = await c.call_tool(step["call_error"], step["args"])
                except MCPError as e:
                    return f"JSON-RPC error {e.code}"
                assert r.is_error, r
                return "isError result"
            await w.check(f"tools/call {step['call_error']} with bad arguments is an error", call_error)
        elif "templates" in step:
            async def templates(step=step):
                listed = (await c.list_resource_templates()).resource_templates
                assert [t.uri_template for t in listed] == step["templates"], listed
            await w.check(f"resources/templates/list = {step['templates']}", templates)
        elif "read" in step:
            async def read(step=step):
                r = await c.read_resource(step["read"])
                assert str(r.contents[0].uri) == step["read"], r.contents
                assert r.contents[0].text == step["text"], r.contents
            await w.check(f"resources/read {step['read']}", read)
        elif "read_error" in step:
            async def read_error(step=step):
                try:
                    await c.read_resource(step["read_error"])
                except MCPError as e:
                    assert e.code in (-32002, -32602), (e.code, str(e))
                    return f"code {e.code}"
                raise AssertionError("the read succeeded")
            await w.check(f"resources/read {step['read_error']} is \"resource not found\"", read_error)
        elif "prompts" in step:
            async def prompts(step=step):
                listed = (await c.list_prompts()).prompts
                assert [p.name for p in listed] == step["prompts"], listed
            await w.check(f"prompts/list = {step['prompts']}", prompts)
        elif "prompt" in step:
            async def prompt(step=step):
                r = await c.get_prompt(step["prompt"], step["args"])
                assert r.messages[0].content.text == step["text"], r.messages
            await w.check(f"prompts/get {step['prompt']}", prompt)
        else:
            raise ValueError(f"unknown step {step}")


async def main() -> int:
    argv = sys.argv[1:]
    if not argv:
        print(__doc__, file=sys.stderr)
        return 2
    name = argv.pop(0)
    command: list[str] = []
    if "--" in argv:
        command = argv[argv.index("--") + 1 :]
        argv = argv[: argv.index("--")]
    url, refused, headers = None, False, {}
    while argv:
        a = argv.pop(0)
        if a == "--url":
            url = argv.pop(0)
        elif a == "--header":
            k, _, v = argv.pop(0).partition(":")
            headers[k.strip()] = v.strip()
        elif a == "--refused":
            refused = True
        else:
            print(f"unknown argument {a}", file=sys.stderr)
            return 2
    steps = json.loads((pathlib.Path(__file__).parent / "examples.json").read_text())[name]
    http_client = None
    if url:
        http_client = httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30.0, read=60.0))
        server: Any = streamable_http_client(url, http_client=http_client)
    else:
        server = StdioServerParameters(command=command[0], args=command[1:])
    w = Walk()
    try:
        with anyio.fail_after(60):
            if refused:
                async def refused_check():
                    try:
                        async with Client(server, read_timeout_seconds=TIMEOUT):
                            pass
                    except BaseException as e:  # noqa: BLE001 (an ExceptionGroup from the task group)
                        refusal = repr(e)
                    else:
                        raise AssertionError("connected without credentials")
                    # The SDK reports the refusal without its status: ask the server directly.
                    async with httpx2.AsyncClient() as raw:
                        r = await raw.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "ping"},
                                           headers={"accept": "application/json, text/event-stream"})
                    assert r.status_code == 401, (r.status_code, r.text)
                    assert r.headers.get("www-authenticate", "").startswith("Bearer"), r.headers
                    return f"HTTP 401; the SDK said {refusal[:80]}"

                await w.check(f"{name}: refused without credentials", refused_check)
            else:
                async with Client(server, read_timeout_seconds=TIMEOUT) as c:
                    w.passed += 1
                    print(f"ok   {name}: connect", flush=True)
                    await walk(c, name, steps, w)
    except Exception:  # noqa: BLE001
        w.failed += 1
        print(f"FAIL unexpected: {traceback.format_exc()}", flush=True)
    finally:
        if http_client is not None:
            await http_client.aclose()
    print(f"{w.passed} passed, {w.failed} failed", flush=True)
    return 1 if w.failed else 0


if __name__ == "__main__":
    sys.exit(anyio.run(main))
