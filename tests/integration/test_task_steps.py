"""Checkpointed steps and sleeps on the SQS backend: the kit on Amazon DynamoDB Local and moto server's SQS,
the real worker handler fed by the local event source, clients on the real HTTP endpoint.

The issue's task `step A -> sleep 2 h -> step B -> elicit -> step C` runs once per step across its three
runs; the 2 hours pass on the runtime's clock (the test moves it on), so the sweeper, not a delayed message
(SQS delays stop at 15 minutes), wakes the task. A short sleep wakes by its delayed message; a step whose
worker dies while it runs fails the task without running the step, or the steps before it, again.
"""

from __future__ import annotations

import json
import secrets
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from lambda_mcp.protocol.ids import TaskInputId
from lambda_mcp.storage.records import TaskRecord
from lambda_mcp.tasks.runtime import TaskRuntime
from lambda_mcp.tasks.sqs import message_body
from tests.apps import checkpointed
from tests.apps.checkpointed import runs
from tests.support.client import MCPTestClient
from tests.support.polling import until
from tests.support.task_stack import ProxiedStack, proxied_stack

pytestmark = pytest.mark.anyio
TWO_HOURS = 7200
CAPABILITIES = {"elicitation": {}, "extensions": {"io.modelcontextprotocol/tasks": {}}}
TASKS = {"io.modelcontextprotocol/clientCapabilities": CAPABILITIES}
GO = {"action": "accept", "content": {"go": True}}


class Clock:
    """The runtime's clock: the wall clock, moved on by the test."""

    def __init__(self) -> None:
        self.offset = 0.0

    def __call__(self) -> float:
        return time.time() + self.offset


@pytest.fixture
def stack(
    dynamodb_local_url: str, moto_server_url: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> Iterator[ProxiedStack]:
    monkeypatch.setenv("LAMBDA_MCP_TEST_COUNTS", str(tmp_path / "counts"))
    with proxied_stack("steps", monkeypatch, dynamodb_local_url, moto_server_url, checkpointed.app) as stack:
        yield stack


@pytest.fixture
def clock(stack: ProxiedStack, monkeypatch: pytest.MonkeyPatch) -> Clock:
    moved = Clock()
    monkeypatch.setattr(stack.runtime, "clock", moved)
    return moved


@pytest.fixture
async def running(stack: ProxiedStack) -> AsyncIterator[ProxiedStack]:
    source = stack.source().start()
    yield stack
    source.stop()


@pytest.fixture
async def client(stack: ProxiedStack) -> AsyncIterator[MCPTestClient]:
    mcp = MCPTestClient(stack.kit)
    yield mcp
    await mcp.close()
    assert mcp.recorder.violations == [], mcp.recorder.violations


async def _reached(stack: ProxiedStack, task_id: str, ready: str) -> TaskRecord:
    async def found() -> TaskRecord | None:
        record = await stack.runtime.store.get(task_id, stack.runtime.clock())
        asleep = record is not None and record.wake_at > 0 and record.lease_owner is None
        return record if record is not None and (record.status == ready or (ready == "asleep" and asleep)) else None

    return await until(found, what=f"task {task_id} to be {ready}")


def _delayed(stack: ProxiedStack) -> int:
    name = "ApproximateNumberOfMessagesDelayed"
    return int(stack.sqs.get_queue_attributes(QueueUrl=stack.queue_url, AttributeNames=[name])["Attributes"][name])


async def _sweep_until_requeued(runtime: TaskRuntime) -> dict[str, int]:
    async def swept() -> dict[str, int] | None:  # the due index is eventually consistent
        counts = await runtime.sweep()
        return counts if counts["requeued"] else None

    return await until(swept, what="the sweeper to wake the task")


@pytest.mark.parametrize("era", ["2026-07-28", "2025-11-25"])
async def test_with_the_sqs_backend_the_run_after_the_answer_does_not_run_a_or_b_again(
    running: ProxiedStack, client: MCPTestClient, clock: Clock, era: str
) -> None:
    label = secrets.token_hex(4)
    call = {"name": "pipeline", "arguments": {"label": label}}
    if era == "2026-07-28":
        created = await client.modern("tools/call", call, meta=TASKS)
        task_id = created.result["taskId"]
    else:
        await client.initialize(era, {"elicitation": {}})
        created = await client.legacy("tools/call", {**call, "task": {}, "_meta": {"progressToken": "p"}})
        task_id = created.result["task"]["taskId"]

    asleep = await _reached(running, task_id, "asleep")  # run 1: A, then the sleep ends the run
    assert runs(label) == {"run": 1, "A": 1}
    assert asleep.status == "working" and asleep.attempts == 0 and asleep.due_at == asleep.wake_at
    assert TWO_HOURS - 60 < asleep.wake_at - clock() <= TWO_HOURS
    assert asleep.expires_at > asleep.wake_at  # it lives to wake (its TTL grew)
    await until(running.drained, what="the first run's message to be deleted")
    assert _delayed(running) == 0  # 2 h is past SQS's longest delay: the sweeper wakes it

    running.sqs.send_message(QueueUrl=running.queue_url, MessageBody=message_body(task_id))  # an early message
    await until(running.drained, what="the early message to be handled")
    assert runs(label) == {"run": 1, "A": 1}
    assert await _reached(running, task_id, "asleep") == asleep  # untouched

    clock.offset += TWO_HOURS + 1
    counts = await _sweep_until_requeued(running.runtime)
    assert counts["unclaimed"] == 0  # a task that wakes is no lost message
    await _reached(running, task_id, "input_required")  # run 2: A recorded, the sleep over, B, then the question
    assert runs(label) == {"run": 2, "A": 1, "B": 1}

    if era == "2026-07-28":
        update = {"taskId": task_id, "inputResponses": {"go": GO}}
        await client.modern("tasks/update", update, meta=TASKS, headers={"mcp-name": task_id})
    else:  # the client's response POST to the task's question (what tasks/result relays)
        reply = {"jsonrpc": "2.0", "id": TaskInputId(task_id, "go").format(), "result": GO}
        assert (await client.send("POST", json.dumps(reply), client.legacy_headers())).status == 202
    final = await running.settled(task_id)
    assert final.status == "completed", final.error
    assert final.result is not None and final.result["content"][0]["text"] == "a B[1, 2] c=True"
    assert runs(label) == {"run": 3, "A": 1, "B": 1, "C": 1}  # run 3: A and B recorded, C

    if era == "2025-11-25":  # what tasks/result relays: each message once, in the order the runs sent them
        events = sorted(
            (i for i in running.items("SESSION#") if f"EVENT#task-{task_id}#" in i["sk"]["S"]),
            key=lambda item: item["sk"]["S"],
        )
        sent = [json.loads(i["message"]["S"])["params"]["message"] for i in events]
        assert sent == ["in A", "after A", "after B", "answered", "in C"]


async def test_a_short_sleep_wakes_by_its_delayed_message(running: ProxiedStack) -> None:
    label = secrets.token_hex(4)
    task = await running.runtime.create(
        owner="principal:t",
        method="tools/call",
        params={"name": "nap", "arguments": {"label": label, "seconds": 2}},
        wire="modern",
        protocol_version="2026-07-28",
        client_capabilities={},
    )
    asleep = await _reached(running, task.task_id, "asleep")
    assert runs(label) == {"run": 1, "before": 1}
    assert await until(lambda: _delayed(running), what="the wake-up message") == 1
    final = await running.settled(task.task_id, timeout=20)  # no sweep: the message was delayed past the wake-up
    assert final.status == "completed" and time.time() >= asleep.wake_at
    assert runs(label) == {"run": 2, "before": 1, "after": 1}


async def test_a_crash_inside_step_b_fails_the_task_without_running_a_or_b_again(running: ProxiedStack) -> None:
    """Step B's worker dies while B runs; the message comes back, and the next run finds B started and not
    finished: at most once, so the task fails, and A's recorded result is not computed again."""
    label = secrets.token_hex(4)
    task = await running.runtime.create(
        owner="principal:t",
        method="tools/call",
        params={"name": "crash_in_b", "arguments": {"label": label}},
        wire="modern",
        protocol_version="2026-07-28",
        client_capabilities={},
    )
    final = await running.settled(task.task_id, timeout=30)
    assert final.status == "failed" and final.error is not None
    assert "step 'B' was interrupted" in final.error["message"] and "at most once" in final.error["message"]
    assert runs(label) == {"run": 2, "A": 1, "B": 1}
