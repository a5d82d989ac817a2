"""The floor: the least a Python ASGI app can do to answer bench/run.py's 2026 `tools/call add(1, 2)`
and log it as deployed. A reference for the warm rows, not a server: it serves this one request.

It checks what any server must for this request (Host, Accept, Content-Type, the JSON-RPC envelope,
`MCP-Protocol-Version` against `_meta`, `Mcp-Method` and `Mcp-Name` against the body, two integer
arguments), answers the result lambda-mcp answers, and writes one JSON log line carrying the
request's EMF metrics to stdout, in one write, as lambda-mcp's observer does. Anything else gets 400.
Nothing here is shared with lambda-mcp: its request path costs what it costs on top of this.
"""

from __future__ import annotations

import json
import os
import sys
import time
from typing import Any

from mangum import Mangum

_encode = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False, check_circular=False).encode
_HOSTS = {h for h in os.environ.get("BENCH_ALLOWED_HOSTS", "").split(",") if h}
_VERSION = "io.modelcontextprotocol/protocolVersion"
_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"
_DIRECTIVE = {
    "Namespace": "bench",
    "Dimensions": [["tool", "service"]],
    "Metrics": [{"Name": "ToolCalls", "Unit": "Count"}, {"Name": "ToolLatency", "Unit": "Milliseconds"}],
}


def add(a: int, b: int) -> int:
    return a + b


def _answer(headers: dict[str, str], body: bytes) -> dict[str, Any] | None:
    """The result of a well-formed request, or None."""
    if headers.get("host") not in _HOSTS or headers.get("content-type") != "application/json":
        return None
    if "application/json" not in headers.get("accept", ""):
        return None
    message = json.loads(body)
    params = message.get("params") if isinstance(message, dict) else None
    if message.get("jsonrpc") != "2.0" or not isinstance(message.get("id"), int | str) or not isinstance(params, dict):
        return None
    meta = params.get("_meta")
    if not isinstance(meta, dict) or meta.get(_VERSION) != headers.get("mcp-protocol-version"):
        return None
    if not isinstance(meta.get(_CAPABILITIES), dict) or message.get("method") != headers.get("mcp-method"):
        return None
    arguments = params.get("arguments")
    if params.get("name") != headers.get("mcp-name") or params.get("name") != "add" or not isinstance(arguments, dict):
        return None
    a, b = arguments.get("a"), arguments.get("b")
    if type(a) is not int or type(b) is not int:
        return None
    value = add(a, b)
    result = {"content": [{"type": "text", "text": str(value)}], "structuredContent": {"result": value}}
    return {"jsonrpc": "2.0", "id": message["id"], "result": {**result, "isError": False, "resultType": "complete"}}


async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    started = time.perf_counter()
    headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in scope["headers"]}
    received = await receive()
    try:
        answer = _answer(headers, received.get("body", b""))
    except ValueError:
        answer = None
    body = _encode(answer).encode() if answer is not None else b""
    status = 200 if answer is not None else 400
    raw = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": raw})
    await send({"type": "http.response.body", "body": body})
    now = time.time()
    elapsed = round((time.perf_counter() - started) * 1000, 3)
    line = {
        "level": "INFO",
        "location": "floor",
        "message": "request",
        "timestamp": time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(now)) + f",{int(now % 1 * 1000):03d}+0000",
        "service": "bench",
        "method": "tools/call",
        "status": status,
        "duration_ms": elapsed,
        "_aws": {"Timestamp": int(now * 1000), "CloudWatchMetrics": [_DIRECTIVE]},
        "tool": "add",
        "ToolCalls": [1],
        "ToolLatency": [elapsed],
    }
    sys.stdout.write(_encode(line) + "\n")


handler = Mangum(app, lifespan="off")
