"""TaskRuntime rules that need no wire: notifications of a worker run, oversized results, a failed enqueue."""

from __future__ import annotations

from typing import Any

import pytest

from lambda_mcp.protocol.ids import TaskStream
from lambda_mcp.storage import InMemoryEventLog
from lambda_mcp.storage.errors import StorageUnavailable
from lambda_mcp.tasks import InMemoryTaskStore, TaskRecord
from lambda_mcp.tasks.execution import Execute, Outcome, SubmitFailed, Submitted, TaskRun, submit_all
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


async def _completes(record: TaskRecord, run: TaskRun) -> Outcome:
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

    async def execute(record: TaskRecord, run: TaskRun) -> Outcome:
        await run.notify(progress)
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
    async def execute(record: TaskRecord, run: TaskRun) -> Outcome:
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
        task.replace(status="input_required", input_requests={"q": {"method": "elicitation/create"}}, due_at=0.0)
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
    await runtime.store.save(record.replace(lease_owner="other", lease_expires_at=runtime.clock() + 60))
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
        await store.save(record.replace(attempts=1, lease_owner="dead", due_at=now - 1))
    store.unreadable = tasks[7].task_id
    counts = await runtime.sweep(limit=25)
    assert counts["requeued"] == 39 and counts["errors"] == 1
    assert sorted(executor.submitted) == sorted(t.task_id for t in tasks if t is not tasks[7])
    store.unreadable = None
    assert (await runtime.sweep())["requeued"] == 1 and executor.submitted[-1] == tasks[7].task_id


# -- issue 41: retries, voids, the stop flag, honest counts ----------------------------------------------
async def _keyed(
    runtime: TaskRuntime, request_id: str | int = 1, owner: str = "principal:p", **params: Any
) -> TaskRecord:
    return await runtime.create(
        owner=owner,
        method="tools/call",
        params={"name": "t", "arguments": params},
        wire="modern",
        protocol_version="2026-07-28",
        client_capabilities={},
        request_id=request_id,
    )


async def test_a_retry_of_the_same_request_gets_the_first_task_and_is_not_queued_again() -> None:
    executor = Recorded()
    runtime = _runtime(executor)
    first = await _keyed(runtime)
    assert (await _keyed(runtime)).task_id == first.task_id
    assert executor.submitted == [first.task_id]
    others = {
        (await _keyed(runtime, "1")).task_id,
        (await _keyed(runtime, 2)).task_id,
        (await _keyed(runtime, a=1)).task_id,
    }
    assert len(others | {first.task_id}) == 4  # another id (a string is not the number), or other params
    assert (await _keyed(runtime, owner="principal:q")).task_id != first.task_id


async def test_callers_without_a_principal_or_a_session_get_no_retry_key() -> None:
    runtime = _runtime(Recorded())
    assert (await _keyed(runtime, owner="anonymous")).task_id != (await _keyed(runtime, owner="anonymous")).task_id


async def test_a_retry_of_a_create_that_failed_itself_makes_a_new_task_that_is_queued() -> None:
    executor = Recorded(fail=True)
    runtime = _runtime(executor)
    with pytest.raises(SubmitFailed):
        await _keyed(runtime)
    executor.fail = False
    retried = await _keyed(runtime)
    assert executor.submitted == [retried.task_id] and retried.status == "working"
    (voided, _), _ = await runtime.store.list_owned("principal:p", runtime.clock())
    assert voided.status == "failed" and voided.version == 1


class _FlakyFlag(InMemoryTaskStore):
    def __init__(self, failures: int) -> None:
        super().__init__()
        self.failures = failures

    async def mark_stopped(self, task_id: str, expires_at: float) -> None:
        if self.failures:
            self.failures -= 1
            raise StorageUnavailable("throttled")
        await super().mark_stopped(task_id, expires_at)


@pytest.mark.parametrize(("failures", "flagged"), [(2, True), (3, False)])
async def test_a_cancel_tries_the_stop_flag_a_few_times(failures: int, flagged: bool) -> None:
    store = _FlakyFlag(failures)
    runtime = TaskRuntime(store, Recorded(), _completes)
    task = await _create(runtime)
    cancelled = await runtime.cancel(task)
    assert cancelled.status == "cancelled" and await store.stopped(task.task_id, runtime.clock()) is flagged


def test_the_ttl_floor_has_a_cycle_of_slack_for_a_delivery_that_never_claimed() -> None:
    runtime = _runtime(Recorded())  # the template's values: lease 905 s, sweeps every 300 s, 3 attempts
    assert runtime.min_ttl_ms == (4 * (905 + 300) + 300) * 1000


async def test_submit_all_counts_a_submit_that_raised_as_ambiguous() -> None:
    class Flaky(Recorded):
        async def submit(self, task_id: str) -> None:
            if task_id == "b":
                raise ConnectionError("answer lost")
            await super().submit(task_id)

    assert await submit_all(Flaky(), ["a", "b", "c"]) == Submitted(sent=["a", "c"], ambiguous=["b"])


class _ClaimedMeanwhile(InMemoryTaskStore):
    """A store where a worker claims the task just before the next write of it lands."""

    def __init__(self) -> None:
        super().__init__()
        self.claim_before_save = False

    async def save(self, record: TaskRecord) -> TaskRecord:
        if self.claim_before_save:
            self.claim_before_save = False
            stored = await self.get(record.task_id, 0)
            assert stored is not None
            await super().save(stored.replace(lease_owner="w", lease_expires_at=stored.created_at + 600))
        return await super().save(record)


async def test_a_failure_that_meets_a_fresh_claim_leaves_the_task_to_its_worker() -> None:
    store = _ClaimedMeanwhile()
    runtime = TaskRuntime(store, Recorded(), _completes)
    task = await _create(runtime)
    store.claim_before_save = True
    settled = await runtime.settle(task, "failed", error={"code": -32603, "message": "dead-lettered"})
    assert settled.status == "working" and settled.lease_owner == "w"  # the message was delivered after all
    assert not await store.stopped(task.task_id, runtime.clock())


async def test_failing_a_task_under_a_lease_writes_its_stop_flag() -> None:
    runtime = _runtime(Recorded())
    task = await _create(runtime)
    leased = await runtime.store.save(task.replace(lease_owner="w", lease_expires_at=runtime.clock() + 600))
    settled = await runtime.settle(leased, "failed", error={"code": -32603, "message": "given up"})
    assert settled.status == "failed" and await runtime.store.stopped(task.task_id, runtime.clock())
