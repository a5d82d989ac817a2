"""Expired rows never hide live ones, on every adapter (issue 13): 150 expired `working` tasks at the head
of the due index, and 150 expired change entries after a reader's cursor, used to stall the sweeper and
the change feed for good (a `Limit`-then-filter read saw only expired rows, page after page)."""

from __future__ import annotations

import time
from typing import Any

import pytest

from lambda_mcp.protocol.ids import change_cursor
from lambda_mcp.storage import ChangeLog
from lambda_mcp.tasks import TaskRecord, TaskStore, new_task_id
from lambda_mcp.tasks.runtime import TaskRuntime

pytestmark = pytest.mark.anyio
NOW = 1_800_000_000.0
EXPIRED = 150


class RecordingExecutor:
    def __init__(self) -> None:
        self.submitted: list[str] = []

    async def submit(self, task_id: str) -> None:
        self.submitted.append(task_id)

    def cancel(self, task_id: str) -> None:
        raise AssertionError("the sweeper never cancels")


def _working(due_at: float, expires_at: float) -> TaskRecord:
    return TaskRecord(
        task_id=new_task_id(),
        owner="principal:sweeper-test",
        method="tools/call",
        params={"name": "t", "arguments": {}},
        created_at=NOW - 1000,
        updated_at=NOW - 1000,
        expires_at=expires_at,
        ttl_ms=1,
        poll_interval_ms=500,
        status="working",
        due_at=due_at,
    )


async def _never_executed(*_: Any) -> Any:
    raise AssertionError("the sweeper only enqueues")


async def test_the_sweeper_pages_past_expired_tasks_to_a_live_one_and_cleans_the_index(task_store: TaskStore) -> None:
    for index in range(EXPIRED):  # most overdue first: they fill the first page and a half
        await task_store.create(_working(due_at=NOW - 900 + index * 0.001, expires_at=NOW - 10))
    live = _working(due_at=NOW - 5, expires_at=NOW + 3600)
    await task_store.create(live)
    executor = RecordingExecutor()
    runtime = TaskRuntime(task_store, executor, _never_executed, clock=lambda: NOW)
    counts = await runtime.sweep(limit=100)
    assert counts == {
        "requeued": 1,
        "unclaimed": 1,  # never claimed: its message was lost
        "failed": 0,
        "dropped": EXPIRED,
        "expired": EXPIRED,
        "unsweepable": 0,
        "ambiguous": 0,
        "errors": 0,
    }  # each expired working
    assert executor.submitted == [live.task_id]
    assert await task_store.list_due(NOW + 10_000) == [live.task_id]  # requeued, due again later
    requeued = await task_store.get(live.task_id, NOW)
    assert requeued is not None and requeued.due_at == NOW + runtime.requeue_after_seconds
    assert await runtime.sweep() == {
        "requeued": 0,
        "unclaimed": 0,
        "failed": 0,
        "dropped": 0,
        "expired": 0,
        "unsweepable": 0,
        "ambiguous": 0,
        "errors": 0,
    }  # nothing to clean


async def test_the_change_feed_reads_past_expired_entries_after_an_old_cursor(change_log: ChangeLog) -> None:
    now = time.time()
    old = now - 3 * 3600
    cursor = change_cursor(old - 1)  # a reader that last read three hours ago
    for index in range(EXPIRED):
        await change_log.publish("resource", f"test://expired/{index}", old + index * 0.001)
    live = await change_log.publish("resource", "test://live", now)
    assert [c.cursor for c in await change_log.since(cursor, time.time())] == [live.cursor]
