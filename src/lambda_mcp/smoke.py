"""`lambda-mcp smoke URL [--stream]`: smoke-test a deployed (or local) lambda-mcp endpoint on both protocol
eras, over the standard library's HTTP client (it ships in the wheel; infra/smoke.py runs the same code).

2026-07-28: `server/discover` and `tools/list`. 2025-11-25: `initialize`, `notifications/initialized`,
`tools/list`, `DELETE` of the session, and a check that the deleted session now answers 404.
With `--stream` (a Transport=streaming deployment), then on each era: a `tools/call` of a tool that reports
progress (the weather example's `packing_list` unless told), read as it arrives, timing the first progress
event and the result. It fails when no progress event comes before the result, or when the first one comes
less than `--min-lead` seconds before it: with a tool that reports progress and then works for a while, a
lead of about that while proves that the front door streams (a buffered one delivers both at once).
Prints one line per step; exits 1 on the first step that fails.
"""

from __future__ import annotations

import argparse
import json
import time
import urllib.error
import urllib.request
from typing import Any

from .protocol.names import META_CAPABILITIES, META_VERSION
from .protocol.revisions import MODERN
from .protocol.revisions import NEWEST_LEGACY as LEGACY

META = {META_VERSION: MODERN, META_CAPABILITIES: {}}


class SmokeFailure(Exception):
    pass


def _request(
    url: str, method: str, headers: dict[str, str], body: dict[str, Any] | None = None
) -> tuple[int, dict[str, str], dict[str, Any] | None]:
    data = json.dumps(body).encode() if body is not None else None
    all_headers = {"accept": "application/json, text/event-stream", **headers}
    if data is not None:
        all_headers["content-type"] = "application/json"
    request = urllib.request.Request(url, data=data, method=method, headers=all_headers)
    try:
        with urllib.request.urlopen(request, timeout=35) as response:
            status, response_headers, raw = response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as exc:
        status, response_headers, raw = exc.code, dict(exc.headers), exc.read()
    return status, {k.lower(): v for k, v in response_headers.items()}, _last_message(raw, response_headers)


def _last_message(raw: bytes, headers: dict[str, str]) -> dict[str, Any] | None:
    text = raw.decode(errors="replace")
    content_type = {k.lower(): v for k, v in headers.items()}.get("content-type", "")
    if "text/event-stream" in content_type:
        lines = [line[5:].strip() for line in text.splitlines() if line.startswith("data:")]
        text = next((line for line in reversed(lines) if line), "")
    if not text.strip():
        return None
    loaded: dict[str, Any] = json.loads(text)
    return loaded


def _rpc(
    url: str, headers: dict[str, str], method: str, params: dict[str, Any] | None, ident: int
) -> tuple[dict[str, str], dict[str, Any]]:
    body: dict[str, Any] = {"jsonrpc": "2.0", "id": ident, "method": method}
    if params is not None:
        body["params"] = params
    status, response_headers, message = _request(url, "POST", headers, body)
    if status != 200 or message is None or "result" not in message:
        raise SmokeFailure(f"{method}: HTTP {status}: {json.dumps(message)[:500]}")
    result: dict[str, Any] = message["result"]
    return response_headers, result


def run(url: str, auth: dict[str, str]) -> None:
    modern = {**auth, "mcp-protocol-version": MODERN}
    _, found = _rpc(url, {**modern, "mcp-method": "server/discover"}, "server/discover", {"_meta": META}, 1)
    info = found.get("_meta", {}).get("io.modelcontextprotocol/serverInfo", {})
    versions = found.get("supportedVersions")
    print(f"ok  {MODERN} server/discover: {info.get('name')} {info.get('version')}, versions {versions}")
    _, listed = _rpc(url, {**modern, "mcp-method": "tools/list"}, "tools/list", {"_meta": META}, 2)
    print(f"ok  {MODERN} tools/list: {[t['name'] for t in listed.get('tools', [])]}")

    params = {"protocolVersion": LEGACY, "capabilities": {}, "clientInfo": {"name": "lambda-mcp-smoke", "version": "1"}}
    headers, started = _rpc(url, auth, "initialize", params, 3)
    session = headers.get("mcp-session-id")
    if not session:
        raise SmokeFailure("initialize: no MCP-Session-Id header")
    print(f"ok  {LEGACY} initialize: negotiated {started.get('protocolVersion')}, session {session[:8]}...")
    legacy = {**auth, "mcp-protocol-version": started["protocolVersion"], "mcp-session-id": session}
    status, _, _ = _request(url, "POST", legacy, {"jsonrpc": "2.0", "method": "notifications/initialized"})
    if status != 202:
        raise SmokeFailure(f"notifications/initialized: HTTP {status}, expected 202")
    _, listed = _rpc(url, legacy, "tools/list", None, 4)
    print(f"ok  {LEGACY} tools/list: {len(listed.get('tools', []))} tools")
    status, _, _ = _request(url, "DELETE", legacy)
    if status not in (200, 204):
        raise SmokeFailure(f"DELETE session: HTTP {status}")
    status, _, _ = _request(url, "POST", legacy, {"jsonrpc": "2.0", "id": 5, "method": "tools/list"})
    if status != 404:
        raise SmokeFailure(f"request on the deleted session: HTTP {status}, expected 404")
    print(f"ok  {LEGACY} DELETE: the session now answers 404")


def _timed_call(
    url: str, headers: dict[str, str], tool: str, arguments: dict[str, Any], meta: dict[str, Any]
) -> tuple[float, float, str]:
    """`tools/call` of `tool` with a progress token, its SSE answer read line by line as it arrives: when the
    first progress event and the result came (seconds after sending), and how the answer was framed."""
    params = {"name": tool, "arguments": arguments, "_meta": {**meta, "progressToken": "smoke"}}
    body = json.dumps({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": params}).encode()
    all_headers = {"accept": "application/json, text/event-stream", "content-type": "application/json", **headers}
    request = urllib.request.Request(url, data=body, method="POST", headers=all_headers)
    started = time.monotonic()
    first_progress: float | None = None
    try:
        with urllib.request.urlopen(request, timeout=900) as response:
            framing = "Content-Length" if response.headers.get("content-length") else "chunked (no Content-Length)"
            if "text/event-stream" not in response.headers.get("content-type", ""):
                raise SmokeFailure(f"tools/call {tool}: answered {response.headers.get('content-type')}, not a stream")
            for raw in response:  # each line as it arrives (the body is never read whole)
                line = raw.decode(errors="replace").strip()
                if not line.startswith("data:") or not line[5:].strip():
                    continue
                message = json.loads(line[5:])
                elapsed = time.monotonic() - started
                if message.get("method") == "notifications/progress" and first_progress is None:
                    first_progress = elapsed
                elif message.get("id") == 7:
                    if "result" not in message or message["result"].get("isError"):
                        raise SmokeFailure(f"tools/call {tool}: {json.dumps(message)[:500]}")
                    if first_progress is None:
                        raise SmokeFailure(f"tools/call {tool}: no progress event before the result ({elapsed:.2f} s)")
                    return first_progress, elapsed, framing
    except urllib.error.HTTPError as exc:
        raise SmokeFailure(f"tools/call {tool}: HTTP {exc.code}: {exc.read()[:500]!r}") from None
    raise SmokeFailure(f"tools/call {tool}: the stream ended without the result")


def run_streaming(url: str, auth: dict[str, str], tool: str, arguments: dict[str, Any], min_lead: float) -> None:
    """The streaming check on both eras: progress must arrive at least `min_lead` seconds before the result."""
    modern = {**auth, "mcp-protocol-version": MODERN, "mcp-method": "tools/call", "mcp-name": tool}
    params = {"protocolVersion": LEGACY, "capabilities": {}, "clientInfo": {"name": "lambda-mcp-smoke", "version": "1"}}
    headers, started = _rpc(url, auth, "initialize", params, 8)
    legacy = {**auth, "mcp-protocol-version": started["protocolVersion"], "mcp-session-id": headers["mcp-session-id"]}
    _request(url, "POST", legacy, {"jsonrpc": "2.0", "method": "notifications/initialized"})
    for era, era_headers, meta in ((MODERN, modern, META), (LEGACY, legacy, {})):
        first, result, framing = _timed_call(url, era_headers, tool, arguments, meta)
        timing = f"first progress after {first:.2f} s, result after {result:.2f} s, {framing}"
        if result - first < min_lead:
            raise SmokeFailure(f"{era} tools/call {tool}: {timing}: progress came less than {min_lead:g} s before")
        print(f"ok  {era} streaming tools/call {tool}: {timing}")
    _request(url, "DELETE", legacy)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="lambda-mcp smoke", description="Smoke-test a deployed (or local) lambda-mcp endpoint on both MCP eras."
    )
    parser.add_argument("url", help="the MCP endpoint, e.g. the stack output McpEndpoint")
    parser.add_argument("--bearer", help="send Authorization: Bearer TOKEN (for an API with a JWT authorizer)")
    parser.add_argument("--stream", action="store_true", help="also check streaming (Transport=streaming)")
    parser.add_argument("--stream-tool", default="packing_list", help="a tool that reports progress")
    parser.add_argument("--stream-arguments", default='{"city": "Lisbon", "days": 3}', help="its arguments (JSON)")
    parser.add_argument("--min-lead", type=float, default=0.0, help="seconds progress must precede the result")
    args = parser.parse_args(argv)
    auth = {"authorization": f"Bearer {args.bearer}"} if args.bearer else {}
    try:
        run(args.url, auth)
        if args.stream:
            run_streaming(args.url, auth, args.stream_tool, json.loads(args.stream_arguments), args.min_lead)
    except (SmokeFailure, OSError, ValueError) as exc:
        print(f"FAIL {exc}")
        return 1
    print("smoke test passed")
    return 0
