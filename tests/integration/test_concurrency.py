"""Blocking work never stalls the event loop (issue 14): a sync tool runs in a worker thread on the streaming
server, so a concurrent request is answered meanwhile; the task worker runs the records of a batch
concurrently, so four slow tasks take about the time of one. (Wide margins: the machine is shared.)"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from typing import Any

import anyio
import httpx
import pytest

from lambda_mcp.config import Settings
from lambda_mcp.kit import Stores, build_kit
from lambda_mcp.loader import load_app
from lambda_mcp.local.context import LambdaContext
from lambda_mcp.local.poller import queue_arn, sqs_event
from lambda_mcp.local.queue import InMemoryQueue
from lambda_mcp.tasks import sqs as task_queue
from lambda_mcp.worker import handle_event
from tests.support.polling import until
from tests.support.processes import ROOT

APP = str(ROOT / "tests/apps/blocking.py")
META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}


def _call(name: str, arguments: dict[str, Any]) -> tuple[str, dict[str, str]]:
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": name, "arguments": arguments}}
    body["params"]["_meta"] = META
    headers = {"mcp-protocol-version": "2026-07-28", "mcp-method": "tools/call", "mcp-name": name}
    return json.dumps(body), {**headers, "accept": "application/json, text/event-stream"}


@pytest.mark.anyio
async def test_a_sync_tool_does_not_block_a_concurrent_request_on_the_streaming_server() -> None:
    kit = build_kit(load_app(APP), Settings(state_key=b"k"), streaming=True, local=True)
    app = sys.modules["_lambda_mcp_user_blocking"]  # the app's module, as load_app names it
    transport = httpx.ASGITransport(app=kit.asgi())
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1:8000", timeout=30) as http:
        timings: dict[str, float] = {}

        async def timed(name: str, arguments: dict[str, Any]) -> None:
            body, headers = _call(name, arguments)
            started = time.perf_counter()
            answered = await http.post("/mcp", content=body, headers=headers)
            assert answered.status_code == 200 and '"isError":true' not in answered.text, answered.text
            timings[name] = time.perf_counter() - started

        async with anyio.create_task_group() as group:
            group.start_soon(timed, "blocking", {"seconds": 2.0})
            await until(app.BLOCKING.is_set, what="the sync tool to hold its thread")
            group.start_soon(timed, "quick", {})
    assert timings["blocking"] >= 2.0
    assert timings["quick"] < 1.0, timings  # answered while the sync tool still blocked its thread


def test_a_worker_batch_of_four_slow_tasks_takes_about_the_time_of_one() -> None:
    queue = InMemoryQueue("memory://batch-test")
    task_queue.use_client(queue.url, queue)
    settings = Settings(state_key=b"k", task_queue_url=queue.url)
    kit = build_kit(load_app(APP), settings, streaming=False, local=True, stores=Stores.memory())
    runtime = kit.task_runtime
    assert runtime is not None

    async def create_four() -> list[str]:
        ids = []
        for index in range(4):
            record = await runtime.create(
                owner="principal:batch",
                method="tools/call",
                params={"name": "slow_job", "arguments": {"seconds": 1.5}, "index": index},
                wire="modern",
                protocol_version="2026-07-28",
                client_capabilities={},
            )
            ids.append(record.task_id)
        return ids

    task_ids = asyncio.run(create_four())
    messages = queue.receive_message(QueueUrl=queue.url, MaxNumberOfMessages=10)["Messages"]
    assert len(messages) == 4
    started = time.perf_counter()
    response = handle_event(
        runtime, sqs_event(messages, queue_arn(queue.url)), LambdaContext(60_000), None, kit.stores.changes
    )
    elapsed = time.perf_counter() - started
    assert response == {"batchItemFailures": []}
    finished = [asyncio.run(runtime.store.get(task_id, time.time())) for task_id in task_ids]
    assert [r.status for r in finished if r is not None] == ["completed"] * 4
    assert elapsed < 4.0, elapsed  # serial would be 6 s: the four sync runs overlapped
