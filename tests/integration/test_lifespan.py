"""`@app.lifespan`: once per execution environment, on the loop the requests run on, left at shutdown.

The Lambda case runs the real HTTP entrypoint in a child process with `AWS_LAMBDA_RUNTIME_API` set (as
the runtime sets it), invokes its handler several times and sends SIGTERM, as Lambda does before it
shuts down an environment that has an extension.
"""

from __future__ import annotations

import ast
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import httpx

from lambda_mcp.runloop import process_loop, run
from tests.support.processes import ROOT, lambda_mcp_dev

APP = "tests/apps/lifespan.py"
INVOKE = textwrap.dedent(
    """
    import json, signal, sys
    from lambda_mcp.entrypoints.http import handler
    from lambda_mcp.local.context import LambdaContext

    event = json.load(open("events/http-api-v2/modern_tools_call.json"))
    event["headers"]["mcp-name"] = "where"
    event["body"] = event["body"].replace("test_simple_text", "where")
    for _ in range(4):
        answer = handler(event, LambdaContext())
        print(json.loads(answer["body"])["result"]["structuredContent"], flush=True)
    print("ready", flush=True)
    signal.pause()  # until the test stops the process
    """
)


def _entries(log: Path) -> list[str]:
    return [line.split()[0] for line in log.read_text().splitlines()] if log.exists() else []


def test_in_lambda_it_is_entered_at_cold_start_serves_every_invocation_and_is_left_on_sigterm(tmp_path: Path) -> None:
    log = tmp_path / "lifespan.log"
    env = {
        **os.environ,
        "LIFESPAN_LOG": str(log),
        "LAMBDA_MCP_APP": APP,
        "LAMBDA_MCP_AUTH": "none",
        "AWS_LAMBDA_RUNTIME_API": "127.0.0.1:9001",
        "LAMBDA_MCP_STATE_KEY": "k",
    }
    child = subprocess.Popen(
        [sys.executable, "-c", INVOKE], cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        assert child.stdout is not None
        lines: list[str] = []
        while len(lines) < 50 and (not lines or lines[-1].strip() not in ("ready", "")):
            lines.append(child.stdout.readline())  # the results, between the handler's own JSON log lines
        assert lines[-1].strip() == "ready", (lines, child.stderr.read() if child.poll() is not None else "")
        assert _entries(log) == ["enter"]  # at import (the cold start), before any invocation
        states = [ast.literal_eval(line) for line in lines if line.startswith("{'")]
        assert [s["calls"] for s in states] == [1, 2, 3, 4] and all(s["same_loop"] for s in states)
        child.send_signal(signal.SIGTERM)
        assert child.wait(timeout=10) == 0
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    assert _entries(log) == ["enter", "exit"]


def _where(url: str) -> dict[str, object]:
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {
            "name": "where",
            "arguments": {},
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {},
            },
        },
    }
    headers = {"accept": "application/json", "mcp-protocol-version": "2026-07-28", "mcp-method": "tools/call"}
    answer = httpx.post(url, json=body, headers={**headers, "mcp-name": "where"}, timeout=30).json()
    result: dict[str, object] = answer["result"]["structuredContent"]
    return result


def test_under_dev_it_is_entered_once_per_process_and_left_at_shutdown(tmp_path: Path) -> None:
    for through_lambda in (False, True):
        log = tmp_path / f"lifespan-{through_lambda}.log"
        server = lambda_mcp_dev(APP, through_lambda=through_lambda, env={"LIFESPAN_LOG": str(log)})
        try:
            states = [_where(server.url) for _ in range(5)]
        finally:
            server.stop()
        assert [s["calls"] for s in states] == [1, 2, 3, 4, 5] and all(s["same_loop"] for s in states)
        expected = ["enter", "exit"] if not through_lambda else ["enter"]
        assert _entries(log) == expected, (through_lambda, log.read_text())


def test_the_worker_loop_outlives_each_invocation() -> None:
    """The sweeper used to run on `asyncio.run` (a new loop each time, then none): lifespan resources
    bound to the first loop would have broken on the second invocation."""

    async def current() -> int:
        import asyncio

        return id(asyncio.get_running_loop())

    first, second = run(current()), run(current())
    assert first == second == id(process_loop()) and not process_loop().is_closed()
