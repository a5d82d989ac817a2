"""Task faults on real wires: SQS on moto server, state in Amazon DynamoDB Local, the real worker
handler fed by the local event source (receive, invoke, delete successes, leave failures).

The queue's visibility timeout is 2 s and the worker's invocation timeout 1 s (so a lease lasts
1.1 s); a message is dead-lettered on its 4th receive, as in template.yaml (maxReceiveCount 3).
"""

from __future__ import annotations

import json
import secrets
import time
from collections import Counter
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass

import pytest

from lambda_mcp.config import Settings
from lambda_mcp.kit import build_kit
from lambda_mcp.tasks import TaskRecord
from lambda_mcp.tasks.runtime import TaskRuntime
from tests.support import fault_app
from tests.support.client import MCPTestClient
from tests.support.polling import after, stagger, until
from tests.support.task_stack import WorkerStack, fresh_aws

pytestmark = pytest.mark.anyio
OWNER = "principal:fault-test"


@dataclass
class Stack(WorkerStack):
    async def create(self, tool: str, label: str) -> TaskRecord:
        return await self.runtime.create(
            owner=OWNER,
            method="tools/call",
            params={"name": tool, "arguments": {"label": label}},
            wire="modern",
            protocol_version="2026-07-28",
            client_capabilities={},
        )

    def drained(self) -> bool:
        """Every message of the task queue and its dead-letter queue received and deleted."""
        return self.queued(self.queue_url) == 0 and self.queued(self.dead_letter_url) == 0


@pytest.fixture
def stack(dynamodb_local_url: str, moto_server_url: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[Stack]:
    with fresh_aws("faults", monkeypatch, dynamodb_local_url, moto_server_url) as (table, sqs, queues):
        settings = Settings(
            table_name=table,
            task_queue_url=queues.url,
            task_dead_letter_arn=queues.dead_letter_arn,
            state_key=b"k" * 32,
        )
        kit = build_kit(fault_app.app, settings, streaming=False, local=True)
        assert kit.task_runtime is not None
        yield Stack(kit, kit.task_runtime, sqs, queues.url, queues.dead_letter_url, queues.dead_letter_arn)


@pytest.fixture
async def running(stack: Stack) -> AsyncIterator[Stack]:
    source = stack.source().start()
    yield stack
    source.stop()


async def test_a_message_delivered_three_times_runs_the_task_once(running: Stack) -> None:
    label = secrets.token_hex(4)
    task = await running.create("counted", label)
    for _ in range(2):  # two more deliveries of the same task, picked up concurrently
        running.sqs.send_message(QueueUrl=running.queue_url, MessageBody=json.dumps({"taskId": task.task_id}))
    final = await running.settled(task.task_id)
    await until(running.drained, what="every copy of the message to be received and settled")
    assert fault_app.runs[label] == 1
    assert final.status == "completed" and final.attempts == 1
    assert final.result is not None and final.result["content"][0]["text"] == f"{label} done"
    assert (await running.runtime.store.get(task.task_id, time.time())) == final  # nothing wrote after the end
    assert running.queued(running.queue_url) == 0 and running.queued(running.dead_letter_url) == 0


async def test_a_worker_killed_mid_task_completes_on_redelivery(running: Stack) -> None:
    label = secrets.token_hex(4)
    task = await running.create("crash_once", label)
    final = await running.settled(task.task_id)
    assert final.status == "completed" and final.attempts == 2 and fault_app.runs[label] == 2
    assert final.lease_owner is None


async def test_a_worker_killed_every_time_ends_failed_through_the_dead_letter_queue(running: Stack) -> None:
    label = secrets.token_hex(4)
    task = await running.create("always_crash", label)
    final = await running.settled(task.task_id, timeout=40)
    assert final.status == "failed"
    assert final.error is not None and "dead-letter queue" in final.error["message"]
    assert fault_app.runs[label] == 3  # maxReceiveCount deliveries, then the dead-letter queue
    await until(running.drained, what="the dead letter to be deleted")


async def _sweep_until(runtime: TaskRuntime, key: str) -> dict[str, int]:
    async def swept() -> dict[str, int] | None:  # the due index is eventually consistent
        counts = await runtime.sweep()
        return counts if counts[key] else None

    return await until(swept, what=f"the sweeper to have {key} the task")


async def test_the_sweeper_requeues_a_task_whose_lease_ran_out(stack: Stack) -> None:
    label = secrets.token_hex(4)
    task = await stack.create("crash_once", label)
    stack.sqs.purge_queue(QueueUrl=stack.queue_url)  # its message is gone: only the sweeper can save it
    with pytest.raises(fault_app.WorkerKilled):
        await stack.runtime.work(task.task_id, "worker-that-dies", lease_seconds=0.3)
    held = await stack.runtime.store.get(task.task_id, time.time())
    assert held is not None and held.status == "working" and held.lease_owner == "worker-that-dies"
    await until(after(0.35), what="the lease to run out")
    assert await _sweep_until(stack.runtime, "requeued") == {
        "requeued": 1,
        "unclaimed": 0,
        "failed": 0,
        "dropped": 0,
        "expired": 0,
        "unsweepable": 0,
        "ambiguous": 0,
        "errors": 0,
    }
    source = stack.source().start()
    try:
        final = await stack.settled(task.task_id)
    finally:
        source.stop()
    assert final.status == "completed" and fault_app.runs[label] == 2


async def test_the_sweeper_fails_a_task_after_its_last_attempt(stack: Stack) -> None:
    label = secrets.token_hex(4)
    task = await stack.create("always_crash", label)
    stack.sqs.purge_queue(QueueUrl=stack.queue_url)
    for _ in range(stack.runtime.max_attempts):
        with pytest.raises(fault_app.WorkerKilled):
            await stack.runtime.work(task.task_id, "worker-that-dies", lease_seconds=0.2)
        await until(after(0.25), what="the lease to run out")
    assert await _sweep_until(stack.runtime, "failed") == {
        "requeued": 0,
        "unclaimed": 0,
        "failed": 1,
        "dropped": 0,
        "expired": 0,
        "unsweepable": 0,
        "ambiguous": 0,
        "errors": 0,
    }
    final = await stack.settled(task.task_id)
    assert final.status == "failed" and final.error is not None
    assert "stopped before finishing, 3 times" in final.error["message"]
    assert (await stack.runtime.sweep()) == {
        "requeued": 0,
        "unclaimed": 0,
        "failed": 0,
        "dropped": 0,
        "expired": 0,
        "unsweepable": 0,
        "ambiguous": 0,
        "errors": 0,
    }  # a final task leaves the due index


async def test_cancel_racing_completion_ends_in_one_state_that_tasks_result_agrees_with(running: Stack) -> None:
    client = MCPTestClient(running.kit)
    try:
        await client.initialize()
        outcomes: list[tuple[str, str]] = []
        for i in range(12):
            created = await client.legacy("tools/call", {"name": "quick", "arguments": {"label": str(i)}, "task": {}})
            task_id = created.result["task"]["taskId"]
            await stagger(0.01 * (i % 4))
            cancel = (await client.legacy("tasks/cancel", {"taskId": task_id})).body
            # a cancel either lands first (the task stays cancelled, whatever the worker does later)
            # or finds the task already completed (-32602)
            if "result" in cancel:
                said = cancel["result"]["status"]
                assert said == "cancelled"
            else:
                said = "completed"
                assert cancel["error"]["code"] == -32602
            await until(running.drained, what="the worker to finish or notice the cancel")
            status = (await client.legacy("tasks/get", {"taskId": task_id})).result["status"]
            result = (await client.legacy("tasks/result", {"taskId": task_id})).body
            assert status == said, (i, said, status)
            if status == "completed":
                assert result["result"]["content"][0]["text"] == f"{i} finished"
            else:
                assert result["error"]["message"] == "Task was cancelled"
            outcomes.append((task_id, status))
        print("\ncancel racing completion:", Counter(status for _, status in outcomes))
        for task_id, status in outcomes:  # and nothing changed afterwards
            record = await running.runtime.store.get(task_id, time.time())
            assert record is not None and record.status == status
        assert client.recorder.violations == []
    finally:
        await client.close()
