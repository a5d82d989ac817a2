"""Interaction benchmark: what a legacy server-to-client round trip costs on the buffered Lambda path.

Runs the real HTTP handler (Mangum, API Gateway v2 events) with state in Amazon DynamoDB Local (or
moto server without Java), all on 127.0.0.1, and times each step of a `test_sampling` call: the POST
that suspends it, the client's answer POST, and the GET with Last-Event-ID that re-runs it to its
result; beside it an inline call for reference, and one poll of the legacy GET stream. Prints the
latency and the DynamoDB calls of each step; asserts nothing.

    .venv/bin/python bench/interaction.py [--rounds 30]
"""

from __future__ import annotations

import argparse
import base64
import json
import statistics
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

from tasks import Calls, _env, _summary, initialize_request  # noqa: E402  (the sibling benchmark's helpers)


def _send(
    handler: Any, method: str, body: dict[str, Any] | None, headers: dict[str, str]
) -> tuple[int, str, dict[str, str]]:
    from lambda_mcp.local.context import LambdaContext
    from lambda_mcp.local.gateways import http_api_event

    base = {"content-type": "application/json", "accept": "application/json, text/event-stream", "host": "127.0.0.1"}
    payload = json.dumps(body).encode() if body is not None else b""
    response = handler(http_api_event(method, "/mcp", {**base, **headers}, payload, "127.0.0.1"), LambdaContext())
    raw = response.get("body") or ""
    text = base64.b64decode(raw).decode() if response.get("isBase64Encoded") else raw
    return int(response["statusCode"]), text, {k.lower(): v for k, v in (response.get("headers") or {}).items()}


def _messages(text: str) -> list[dict[str, Any]]:
    if text.startswith("{"):
        return [json.loads(text)]
    return [json.loads(line[6:]) for line in text.splitlines() if line.startswith("data: ") and line[6:].strip()]


def _last_id(text: str) -> str:
    return [line[4:] for line in text.splitlines() if line.startswith("id: ")][-1]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=30, help="sampling round trips to time (default 30)")
    args = parser.parse_args()
    _env()
    sys.path.insert(0, str(ROOT / "src"))
    from lambda_mcp.local import aws

    storage = aws.start(None)
    try:
        aws.configure(storage.endpoint, "bench-interaction")
        calls = Calls()
        from lambda_mcp.entrypoints.http import handler

        print(f"state: {storage.engine} at {storage.endpoint}")
        _, _, headers = _send(handler, "POST", initialize_request({"sampling": {}}), {})
        session = {"mcp-session-id": headers["mcp-session-id"], "mcp-protocol-version": "2025-11-25"}
        steps: dict[str, list[float]] = {
            "inline call": [],
            "suspend (POST)": [],
            "answer (POST)": [],
            "resume (GET)": [],
        }
        step_calls: dict[str, Counter[str]] = {name: Counter() for name in steps}
        op_ms: dict[str, list[float]] = {}
        calls.take()

        def timed(name: str, method: str, body: dict[str, Any] | None, extra: dict[str, str]) -> tuple[int, str]:
            started = time.perf_counter()
            status, text, _ = _send(handler, method, body, {**session, **extra})
            steps[name].append((time.perf_counter() - started) * 1000)
            counts, ms = calls.take()
            step_calls[name].update(counts)
            for operation, median in ms.items():
                op_ms.setdefault(operation, []).append(median)
            return status, text

        for round_ in range(args.rounds):
            rid = 100 + round_
            inline = {"jsonrpc": "2.0", "id": rid * 10, "method": "tools/call", "params": {"name": "test_simple_text"}}
            sampling = {
                "jsonrpc": "2.0",
                "id": rid,
                "method": "tools/call",
                "params": {"name": "test_sampling", "arguments": {"prompt": "hi"}},
            }
            timed("inline call", "POST", inline, {})
            _, text = timed("suspend (POST)", "POST", sampling, {})
            [request] = [m for m in _messages(text) if "method" in m and "id" in m]
            answer = {
                "jsonrpc": "2.0",
                "id": request["id"],
                "result": {"role": "assistant", "content": {"type": "text", "text": "hello"}, "model": "m"},
            }
            status, _ = timed("answer (POST)", "POST", answer, {})
            assert status == 202
            _, text = timed(
                "resume (GET)", "GET", None, {"accept": "text/event-stream", "last-event-id": _last_id(text)}
            )
            assert _messages(text)[-1]["result"]["content"][0]["text"] == "LLM response: hello", text
        for name, values in steps.items():
            per_step = {k: round(v / args.rounds, 2) for k, v in sorted(step_calls[name].items())}
            print(f"{name:15}: {_summary(values)}; AWS calls: {per_step}")
        total = [sum(values[i] for name, values in steps.items() if name != "inline call") for i in range(args.rounds)]
        print(f"{'round trip':15}: {_summary(total)} (server time of suspend + answer + resume)")
        medians = {k: round(statistics.median(v), 1) for k, v in sorted(op_ms.items())}
        print(f"median ms per AWS call (local emulator): {medians}")

        polls: list[float] = []
        cursor: str | None = None
        for _ in range(args.rounds):
            extra = {"accept": "text/event-stream"} | ({"last-event-id": cursor} if cursor else {})
            started = time.perf_counter()
            status, text, _ = _send(handler, "GET", None, {**session, **extra})
            polls.append((time.perf_counter() - started) * 1000)
            assert status == 200, text
            cursor = _last_id(text)
        counts, _ = calls.take()
        per_poll = {k: round(v / args.rounds, 2) for k, v in sorted(counts.items())}
        print(f"{'GET stream poll':15}: {_summary(polls)}; AWS calls: {per_poll}")
    finally:
        storage.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
