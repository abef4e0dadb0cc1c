"""The official Python SDK client against our `everything` as an OAuth resource server
(`--auth-jwks`, `--auth-scope mcp`, `--auth-tool-scope echo=echo:call`): refused with a 401 and
the RFC 9728 challenge without a token, served with one (an httpx client with the header),
and the 403 step-up challenge for a tool whose scope the token lacks.

    .venv/bin/python py-auth.py --url URL --tokens JSON [--ca PEM]
        (JSON: the line auth-server.mjs printed; --ca: trust that CA for an https:// URL)

Prints one line per check ("ok"/"FAIL"), then "N passed, M failed"; exits 1 on any failure.
"""

from __future__ import annotations

import json
import ssl
import sys
import traceback
from typing import Any
from urllib.parse import urlsplit

import anyio
import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

TIMEOUT = 15.0
ACCEPT = {"accept": "application/json, text/event-stream"}
INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                   "clientInfo": {"name": "raw", "version": "1"}}}


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


async def main(argv: list[str]) -> int:
    url, auth, verify = None, None, True
    while argv:
        a = argv.pop(0)
        if a == "--url":
            url = argv.pop(0)
        elif a == "--tokens":
            auth = json.loads(argv.pop(0))
        elif a == "--ca":
            verify = ssl.create_default_context(cafile=argv.pop(0))
        else:
            print(f"unknown argument {a}", file=sys.stderr)
            return 2
    if not url or not auth:
        print("usage: py-auth.py --url URL --tokens JSON [--ca PEM]", file=sys.stderr)
        return 2
    parts = urlsplit(url)
    metadata_url = f"{parts.scheme}://{parts.netloc}/.well-known/oauth-protected-resource{parts.path}"
    bearer = lambda t: {"authorization": f"Bearer {t}"}  # noqa: E731
    w = Walk()
    try:
        with anyio.fail_after(90):
            async with httpx2.AsyncClient(verify=verify, timeout=TIMEOUT) as raw:
                async def no_token():
                    r = await raw.post(url, json=INIT, headers=ACCEPT)
                    assert r.status_code == 401, (r.status_code, r.text)
                    c = r.headers.get("www-authenticate", "")
                    assert c.startswith("Bearer "), c
                    assert f'resource_metadata="{metadata_url}"' in c, c
                    assert 'scope="mcp"' in c, c
                    return c
                await w.check("no token: 401 with the Bearer challenge (resource_metadata, scope)", no_token)

                async def wrong_audience():
                    r = await raw.post(url, json=INIT, headers={**ACCEPT, **bearer(auth["tokens"]["wrong_audience"])})
                    assert r.status_code == 401, r.status_code
                    assert 'error="invalid_token"' in r.headers.get("www-authenticate", ""), r.headers
                await w.check("a token for another resource: 401 invalid_token", wrong_audience)

                async def metadata():
                    r = await raw.get(metadata_url)
                    assert r.status_code == 200, r.status_code
                    doc = r.json()
                    assert doc["resource"] == url, doc
                    assert doc["authorization_servers"] == [auth["issuer"]], doc
                await w.check("the protected resource metadata (RFC 9728)", metadata)

                async def step_up():
                    good = {**ACCEPT, **bearer(auth["tokens"]["good"])}
                    r = await raw.post(url, json=INIT, headers=good)
                    assert r.status_code == 200, (r.status_code, r.text)
                    session = {**good, "mcp-session-id": r.headers["mcp-session-id"],
                               "mcp-protocol-version": "2025-11-25"}
                    r = await raw.post(url, json={"jsonrpc": "2.0", "method": "notifications/initialized"},
                                       headers=session)
                    assert r.status_code == 202, r.status_code
                    r = await raw.post(url, json={"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                                                  "params": {"name": "echo", "arguments": {"text": "x"}}},
                                       headers=session)
                    assert r.status_code == 403, (r.status_code, r.text)
                    c = r.headers.get("www-authenticate", "")
                    assert 'error="insufficient_scope"' in c and "echo:call" in c, c
                    return c
                await w.check("a tool whose scope the token lacks: 403 insufficient_scope", step_up)

            async def refused():
                async with httpx2.AsyncClient(verify=verify, timeout=TIMEOUT) as http:
                    try:
                        async with Client(streamable_http_client(url, http_client=http), read_timeout_seconds=TIMEOUT):
                            pass
                    except BaseException as e:  # noqa: BLE001 (an ExceptionGroup from the task group)
                        return repr(e)[:80]
                raise AssertionError("connected without a token")
            await w.check("the SDK client without a token is refused", refused)

            async def served(token: str, tool: str, args: dict[str, Any], text: str | None):
                async with httpx2.AsyncClient(verify=verify, headers=bearer(token), timeout=httpx2.Timeout(30.0, read=60.0)) as http:
                    async with Client(streamable_http_client(url, http_client=http), read_timeout_seconds=TIMEOUT) as c:
                        tools = [t.name for t in (await c.list_tools()).tools]
                        assert "echo" in tools, tools
                        r = await c.call_tool(tool, args)
                        assert not r.is_error, r
                        if text is not None:
                            assert first_text(r.content) == text, r.content
            await w.check("the SDK client with a valid token: tools/list, test_simple_text",
                          lambda: served(auth["tokens"]["good"], "test_simple_text", {}, None))
            await w.check("the SDK client with the stepped-up token calls echo",
                          lambda: served(auth["tokens"]["stepped_up"], "echo", {"text": "scoped hello"}, "scoped hello"))
    except Exception:  # noqa: BLE001
        w.failed += 1
        print(f"FAIL unexpected: {traceback.format_exc()}", flush=True)
    print(f"{w.passed} passed, {w.failed} failed", flush=True)
    return 1 if w.failed else 0


if __name__ == "__main__":
    sys.exit(anyio.run(main, sys.argv[1:]))
