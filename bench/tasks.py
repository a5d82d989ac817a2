"""Task benchmark: create latency and AWS calls through the Lambda path, and completion -> tasks/result delay.

Everything runs on 127.0.0.1: state in Amazon DynamoDB Local (or moto server without Java), the task
queue on moto server's SQS, the real HTTP handler (Mangum, API Gateway v2 events) and the real worker
handler fed by the local event source. Figures are printed, never asserted.

    .venv/bin/python bench/tasks.py [--creates 50] [--waits 10]
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import json
import os
import statistics
import sys
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
APP = str(ROOT / "examples/conformance/server.py")
TASKS = {"extensions": {"io.modelcontextprotocol/tasks": {}}}


def _env() -> None:
    os.environ.update(
        AWS_ACCESS_KEY_ID="bench",
        AWS_SECRET_ACCESS_KEY="bench",
        AWS_DEFAULT_REGION="us-east-1",
        AWS_REGION="us-east-1",
        LAMBDA_MCP_APP=APP,
        LAMBDA_MCP_STATE_KEY="bench-key-bench-key-bench-key-32",
        LAMBDA_MCP_AUTH="none",
    )
    os.environ.pop("AWS_PROFILE", None)


class Calls:
    """Counts AWS API calls (service.operation) the HTTP handler makes (on the main thread)."""

    def __init__(self) -> None:
        import boto3

        self.counts: Counter[str] = Counter()
        self.ms: dict[str, list[float]] = {}
        self._started = 0.0
        boto3.setup_default_session()
        boto3.DEFAULT_SESSION.events.register("before-call", self._before)
        boto3.DEFAULT_SESSION.events.register("after-call", self._after)

    def _before(self, model: Any, **_: Any) -> None:
        if threading.current_thread() is threading.main_thread():  # the HTTP handler's calls, not the worker's
            self.counts[f"{model.service_model.service_name}.{model.name}"] += 1
            self._started = time.perf_counter()

    def _after(self, model: Any, **_: Any) -> None:
        if threading.current_thread() is threading.main_thread():
            name = f"{model.service_model.service_name}.{model.name}"
            self.ms.setdefault(name, []).append((time.perf_counter() - self._started) * 1000)

    def take(self) -> tuple[Counter[str], dict[str, float]]:
        taken, self.counts = self.counts, Counter()
        ms = {k: round(statistics.median(v), 1) for k, v in sorted(self.ms.items())}
        self.ms = {}
        return taken, ms


def _post(handler: Any, body: dict[str, Any], headers: dict[str, str]) -> tuple[dict[str, Any], dict[str, str]]:
    from lambda_mcp.local.context import LambdaContext
    from lambda_mcp.local.gateways import http_api_event

    base = {
        "content-type": "application/json",
        "accept": "application/json, text/event-stream",
        "host": "127.0.0.1:8000",
    }
    event = http_api_event("POST", "/mcp", {**base, **headers}, json.dumps(body).encode(), "127.0.0.1:8000")
    response = handler(event, LambdaContext())
    raw = response.get("body") or ""
    text = base64.b64decode(raw).decode() if response.get("isBase64Encoded") else raw
    if text.startswith("{"):
        message = json.loads(text)
    else:
        datas = [line[6:] for line in text.splitlines() if line.startswith("data: ") and line[6:].strip()]
        message = json.loads(datas[-1])
    return message, {k.lower(): v for k, v in (response.get("headers") or {}).items()}


def initialize_request(capabilities: dict[str, Any]) -> dict[str, Any]:
    """A 2025-11-25 `initialize` declaring `capabilities`."""
    params = {
        "protocolVersion": "2025-11-25",
        "capabilities": capabilities,
        "clientInfo": {"name": "b", "version": "1"},
    }
    return {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params}


def _modern(name: str, arguments: dict[str, Any]) -> tuple[dict[str, Any], dict[str, str]]:
    meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": TASKS,
    }
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": name, "arguments": arguments, "_meta": meta},
    }
    return body, {"mcp-protocol-version": "2026-07-28", "mcp-method": "tools/call", "mcp-name": name}


def _summary(values: list[float]) -> str:
    ordered = sorted(values)
    p90 = ordered[max(0, int(len(ordered) * 0.9) - 1)]
    return (
        f"median {statistics.median(ordered):7.1f} ms, p90 {p90:7.1f} ms, max {ordered[-1]:7.1f} ms (n={len(values)})"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--creates", type=int, default=50, help="task creations per wire (default 50)")
    parser.add_argument("--waits", type=int, default=10, help="tasks/result waits to time (default 10)")
    args = parser.parse_args()
    _env()
    sys.path.insert(0, str(ROOT / "src"))
    from lambda_mcp.local import aws

    storage = aws.start(None)
    source = None
    queues = storage if storage.engine == "moto" else aws._start_moto(aws._free_port())
    try:
        aws.configure(storage.endpoint, "bench-tasks")
        aws.configure_queues(queues.endpoint)
        calls = Calls()
        from lambda_mcp.entrypoints.http import handler, kit
        from lambda_mcp.local.poller import start_local_worker

        source = start_local_worker()
        print(f"state: {storage.engine} at {storage.endpoint}; queue: moto SQS at {queues.endpoint}")

        # -- create latency and calls, both wires ------------------------------------------
        started, headers = _post(handler, initialize_request({}), {})
        assert "mcp-session-id" in headers, started
        legacy = {"mcp-session-id": headers["mcp-session-id"], "mcp-protocol-version": "2025-11-25"}
        for wire in ("modern", "legacy"):
            latencies: list[float] = []
            calls.take()
            for i in range(args.creates):
                if wire == "modern":
                    body, extra = _modern("slow_compute", {"seconds": 0, "label": str(i)})
                else:
                    body = {
                        "jsonrpc": "2.0",
                        "id": i + 2,
                        "method": "tools/call",
                        "params": {"name": "slow_compute", "arguments": {"seconds": 0}, "task": {}},
                    }
                    extra = legacy
                started = time.perf_counter()
                message, _ = _post(handler, body, extra)
                latencies.append((time.perf_counter() - started) * 1000)
                result = message["result"]
                assert result.get("resultType") == "task" or "task" in result, message
            counts, ms = calls.take()
            per_create = {k: round(v / args.creates, 2) for k, v in sorted(counts.items())}
            print(f"task create, {wire:6} wire: {_summary(latencies)}")
            print(f"  AWS calls per create: {per_create}; median ms per call (local emulators): {ms}")
        time.sleep(2)  # let the workers drain before timing waits

        # -- completion -> tasks/result ----------------------------------------------------
        assert kit.task_runtime is not None
        delays: list[float] = []
        for i in range(args.waits):
            create = {
                "jsonrpc": "2.0",
                "id": 1000 + i,
                "method": "tools/call",
                "params": {"name": "slow_compute", "arguments": {"seconds": 1}, "task": {}},
            }
            task_id = _post(handler, create, legacy)[0]["result"]["task"]["taskId"]
            wait = {"jsonrpc": "2.0", "id": 2000 + i, "method": "tasks/result", "params": {"taskId": task_id}}
            answered: list[float] = []

            def wait_for_result(request: dict[str, Any] = wait, answered: list[float] = answered) -> None:
                asyncio.set_event_loop(asyncio.new_event_loop())  # Mangum runs on the thread's loop
                message, _ = _post(handler, request, legacy)
                assert "result" in message, message
                answered.append(time.time())

            thread = threading.Thread(target=wait_for_result)
            thread.start()
            thread.join(timeout=60)
            record = asyncio.new_event_loop().run_until_complete(kit.task_runtime.store.get(task_id, time.time()))
            assert record is not None and record.status == "completed" and answered
            delays.append((answered[0] - record.updated_at) * 1000)
        poll = kit.task_runtime.poll_interval_ms
        print(f"worker completion -> tasks/result answered: {_summary(delays)}; poll interval {poll} ms")
        print(f"within one poll interval: {sum(d <= poll for d in delays)}/{len(delays)}")
    finally:
        if source is not None:
            source.stop()
        if queues is not storage:
            queues.stop()
        storage.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
