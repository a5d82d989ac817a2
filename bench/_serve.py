"""Cold start of `lambda-mcp serve` (issue 27): process start to the first answered `tools/call`, started as
the Lambda Web Adapter starts it (the kit's run.sh, the function's environment) and made ready as LWA does
(`GET /healthz` every 10 ms), beside the buffered handler's cold start that bench/run.py measures.

    from _serve import serve_cold_start_ms
    serve_cold_start_ms("examples/weather/server.py:app", runs=5)   # [ms, ...]

The time includes the interpreter's start, the kit's and the app's imports, uvicorn's start, LWA's
readiness polling (at most 10 ms late) and one 2026-07-28 `tools/call` over HTTP on 127.0.0.1. It does
not include what only Lambda adds (the layer's extension start, the runtime API, the network).
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parent.parent
RUN_SH = ROOT / "src/lambda_mcp/scaffold/project/app/run.sh"
MODERN = "2026-07-28"
READY_TIMEOUT_SECONDS = 20.0


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _first_tool(app: str) -> tuple[str, dict[str, Any]]:
    """A tool of `app` that needs no arguments, or its first tool with placeholder strings and numbers."""
    from lambda_mcp.loader import load_app

    tools = load_app(app).tools
    if not tools:
        raise SystemExit(f"{app} has no tool to call")
    for name, tool in tools.items():
        if not tool.definition["inputSchema"].get("required"):
            return name, {}
    name, tool = next(iter(tools.items()))
    schema = tool.definition["inputSchema"]
    properties = schema.get("properties", {})
    placeholder = {"integer": 1, "number": 1, "boolean": True}
    arguments = {key: placeholder.get(properties[key].get("type"), "Paris") for key in schema["required"]}
    return name, arguments


def _call(url: str, tool: str, arguments: dict[str, Any]) -> httpx.Response:
    meta = {"io.modelcontextprotocol/protocolVersion": MODERN, "io.modelcontextprotocol/clientCapabilities": {}}
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": tool, "arguments": arguments, "_meta": meta},
    }
    headers = {
        "content-type": "application/json",
        "accept": "application/json, text/event-stream",
        "mcp-protocol-version": MODERN,
        "mcp-method": "tools/call",
        "mcp-name": tool,
    }
    return httpx.post(url, content=json.dumps(body), headers=headers, timeout=30)


def cold_start_once(app: str, tool: str, arguments: dict[str, Any], env: Mapping[str, str] | None = None) -> float:
    """Milliseconds from starting run.sh to the first answered `tools/call` (which must succeed)."""
    location, _, attribute = app.partition(":")
    path = Path(location).resolve()
    port = _free_port()
    environ = {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
        "PORT": str(port),
        "LAMBDA_TASK_ROOT": str(path.parent),
        "LAMBDA_MCP_APP": f"{path.name}:{attribute}" if attribute else path.name,
        "AWS_LAMBDA_EXEC_WRAPPER": "/opt/bootstrap",
        "AWS_LAMBDA_RUNTIME_API": "127.0.0.1:9001",
        "AWS_LWA_INVOKE_MODE": "response_stream",
        "AWS_LWA_READINESS_CHECK_PATH": "/healthz",
        "LAMBDA_MCP_AUTH": "none",
        "LAMBDA_MCP_STATE_KEY": "b" * 32,
        "LAMBDA_MCP_ALLOWED_HOSTS": "127.0.0.1:*",
        **(env or {}),
    }
    base = f"http://127.0.0.1:{port}"
    started = time.perf_counter()
    process = subprocess.Popen(
        [str(RUN_SH)], env=environ, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True
    )
    try:
        while True:
            if process.poll() is not None:
                raise RuntimeError(f"serve exited with {process.returncode}: {process.stderr.read().decode()[-2000:]}")  # type: ignore[union-attr]
            if time.perf_counter() - started > READY_TIMEOUT_SECONDS:
                raise RuntimeError(f"serve was not ready after {READY_TIMEOUT_SECONDS:g} s")
            try:
                if httpx.get(base + "/healthz", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.01)  # LWA's readiness interval
        response = _call(base + "/mcp", tool, arguments)
        elapsed_ms = (time.perf_counter() - started) * 1000
        if response.status_code != 200 or "result" not in response.json():
            raise RuntimeError(f"tools/call {tool} failed: {response.status_code} {response.text[:500]}")
        return elapsed_ms
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout=5)


def serve_cold_start_ms(app: str, runs: int, env: Mapping[str, str] | None = None) -> list[float]:
    """`runs` cold starts of `lambda-mcp serve` on `app` (`path/to/file.py[:attr]`), in ms; `env` adds or
    overrides settings (e.g. `LAMBDA_MCP_TABLE_NAME` and `AWS_ENDPOINT_URL_DYNAMODB` for state in a local
    DynamoDB, as deployed; default: in-memory state)."""
    tool, arguments = _first_tool(app)
    return [cold_start_once(app, tool, arguments, env) for _ in range(runs)]


if __name__ == "__main__":
    target = sys.argv[1] if len(sys.argv) > 1 else "examples/weather/server.py:app"
    samples = serve_cold_start_ms(target, int(sys.argv[2]) if len(sys.argv) > 2 else 5)
    median = sorted(samples)[len(samples) // 2]
    print(f"lambda-mcp serve cold start ({target}): median {median:.0f} ms, {[round(s) for s in samples]}")
