"""TaskRuntime rules that need no wire: notifications of a worker run, oversized results, a failed enqueue."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import pytest

from lambda_mcp.protocol.ids import TaskStream
from lambda_mcp.storage import InMemoryEventLog
from lambda_mcp.storage.errors import StorageUnavailable
from lambda_mcp.tasks import InMemoryTaskStore, TaskRecord
from lambda_mcp.tasks.execution import Execute, Notify, Outcome, SubmitFailed
from lambda_mcp.tasks.runtime import TaskRuntime

pytestmark = pytest.mark.anyio


class Recorded:
    def __init__(self, fail: bool = False) -> None:
        self.submitted: list[str] = []
        self.fail = fail

    async def submit(self, task_id: str) -> None:
        if self.fail:
            raise ConnectionError("queue unreachable")
        self.submitted.append(task_id)

    def cancel(self, task_id: str) -> None:
        return None


async def _completes(record: TaskRecord, is_cancelled: Callable[[], bool], notify: Notify) -> Outcome:
    return Outcome("completed", result={"content": []})


def _runtime(
    executor: Recorded, events: InMemoryEventLog | None = None, execute: Execute = _completes, **options: Any
) -> TaskRuntime:
    return TaskRuntime(InMemoryTaskStore(), executor, execute, events=events, **options)


async def _create(runtime: TaskRuntime, session_id: str | None = "s1") -> TaskRecord:
    return await runtime.create(
        owner="session:s1",
        method="tools/call",
        params={"name": "t", "arguments": {}},
        wire="legacy",
        protocol_version="2025-11-25",
        client_capabilities={},
        session_id=session_id,
    )


async def test_a_worker_run_writes_its_notifications_to_the_task_stream_of_the_session() -> None:
    events = InMemoryEventLog()
    progress = {"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": 1, "progress": 1}}

    async def execute(record: TaskRecord, is_cancelled: Callable[[], bool], notify: Notify) -> Outcome:
        await notify(progress)
        return Outcome("completed", result={"content": []})

    runtime = _runtime(Recorded(), events, execute)
    task = await _create(runtime)
    assert await runtime.work(task.task_id, "w", lease_seconds=30) == "completed"
    logged = await events.read("s1", TaskStream(task.task_id).format())
    assert [(event.seq, event.message) for event in logged] == [(1, progress)]
    assert await events.read("s2", TaskStream(task.task_id).format()) == []  # only the task's own session
    stored = await runtime.store.get(task.task_id, runtime.clock())
    assert stored is not None and stored.attempts == 1 and stored.lease_owner is None and stored.due_at == 0


async def test_a_result_too_large_for_an_item_fails_the_task_with_a_clear_error() -> None:
    async def execute(record: TaskRecord, is_cancelled: Callable[[], bool], notify: Notify) -> Outcome:
        return Outcome("completed", result={"content": [{"type": "text", "text": "x" * 2000}]})

    runtime = _runtime(Recorded(), execute=execute, max_record_bytes=1000)
    task = await _create(runtime)
    assert await runtime.work(task.task_id, "w", lease_seconds=30) == "failed"
    stored = await runtime.store.get(task.task_id, runtime.clock())
    assert stored is not None and stored.result is None and stored.error is not None
    assert "too large" in stored.error["message"] and "1000 bytes" in stored.error["message"]


async def test_a_task_that_cannot_be_queued_is_failed_not_left_working() -> None:
    runtime = _runtime(Recorded(fail=True))
    with pytest.raises(SubmitFailed):
        await _create(runtime)
    (listed,), _ = await runtime.store.list_owned("session:s1", runtime.clock())
    record = await runtime.store.get(listed.task_id, runtime.clock())
    assert record is not None and record.status == "failed" and record.error is not None
    assert record.error["message"] == "Task could not be queued for execution"


async def test_a_resumed_task_the_queue_refuses_stays_working_and_due_for_the_sweeper() -> None:
    executor = Recorded()
    runtime = _runtime(executor)
    task = await _create(runtime)
    parked = await runtime.store.save(
        dataclasses.replace(
            task, status="input_required", input_requests={"q": {"method": "elicitation/create"}}, due_at=0.0
        )
    )
    executor.fail = True
    resumed = await runtime.answer(parked, {"q": {"action": "accept"}})
    stored = await runtime.store.get(task.task_id, runtime.clock())
    assert resumed.status == "working" and stored is not None and stored.status == "working"
    assert stored.input_responses == {"q": {"action": "accept"}}  # the answer is kept
    assert 0 < stored.due_at <= runtime.clock()  # due now: the next sweep queues it
    executor.fail = False
    assert (await runtime.sweep())["requeued"] == 1 and executor.submitted[-1] == task.task_id


async def test_a_second_message_for_a_claimed_task_does_nothing() -> None:
    runtime = _runtime(Recorded())
    task = await _create(runtime)
    record = await runtime.store.get(task.task_id, runtime.clock())
    assert record is not None
    await runtime.store.save(dataclasses.replace(record, lease_owner="other", lease_expires_at=runtime.clock() + 60))
    assert await runtime.work(task.task_id, "w", lease_seconds=30) == "skipped: claimed by a live lease"
    assert await runtime.dead_letter(task.task_id) == "skipped: claimed by a live lease"


class _UnreadableOnce(InMemoryTaskStore):
    """A store whose read of one task fails (storage unavailable): the sweep goes on with the rest."""

    def __init__(self) -> None:
        super().__init__()
        self.unreadable: str | None = None

    async def get(self, task_id: str, now: float) -> TaskRecord | None:
        if task_id == self.unreadable:
            raise StorageUnavailable("throttled")
        return await super().get(task_id, now)


async def test_a_sweep_goes_on_past_a_task_it_cannot_read_and_sweeps_it_next_time() -> None:
    executor = Recorded()
    store = _UnreadableOnce()
    runtime = TaskRuntime(store, executor, _completes)
    tasks = [await _create(runtime) for _ in range(40)]  # more than one page at a time of the sweep's concurrency
    executor.submitted.clear()
    now = runtime.clock()
    for task in tasks:  # their workers died: the lease ran out
        record = await store.get(task.task_id, now)
        assert record is not None
        await store.save(dataclasses.replace(record, attempts=1, lease_owner="dead", due_at=now - 1))
    store.unreadable = tasks[7].task_id
    counts = await runtime.sweep(limit=25)
    assert counts["requeued"] == 39 and counts["errors"] == 1
    assert sorted(executor.submitted) == sorted(t.task_id for t in tasks if t is not tasks[7])
    store.unreadable = None
    assert (await runtime.sweep())["requeued"] == 1 and executor.submitted[-1] == tasks[7].task_id
