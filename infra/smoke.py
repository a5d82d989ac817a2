"""Smoke-test a deployed (or local) lambda-mcp endpoint on both protocol eras, with the standard library only.

Usage: python infra/smoke.py URL [--bearer TOKEN]

2026-07-28: `server/discover` and `tools/list`. 2025-11-25: `initialize`, `notifications/initialized`,
`tools/list`, `DELETE` of the session, and a check that the deleted session now answers 404.
Prints one line per step; exits 1 on the first step that fails.
"""

from __future__ import annotations

import argparse
import json
import sys
import urllib.error
import urllib.request
from typing import Any

MODERN = "2026-07-28"
LEGACY = "2025-11-25"
META = {"io.modelcontextprotocol/protocolVersion": MODERN, "io.modelcontextprotocol/clientCapabilities": {}}


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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("url", help="the MCP endpoint, e.g. the stack output McpEndpoint")
    parser.add_argument("--bearer", help="send Authorization: Bearer TOKEN (for an API with a JWT authorizer)")
    args = parser.parse_args(argv)
    try:
        run(args.url, {"authorization": f"Bearer {args.bearer}"} if args.bearer else {})
    except (SmokeFailure, OSError, ValueError) as exc:
        print(f"FAIL {exc}")
        return 1
    print("smoke test passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
