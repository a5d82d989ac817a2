"""The failure paths of tasks: a message that reached the dead-letter queue, and the sweeper, which finds
working tasks whose worker stopped (or whose message was lost) and queues them again, or fails them once
they used up their attempts.

The sweeper reads the sparse `by-due` index (working tasks only, by when they are due), every shard,
page after page until it runs dry or its time budget is spent; the next scheduled run goes on where it
stopped. Everything here is idempotent: a second message for a task is deduplicated by the claim.

One task never stops the sweep of the others: a storage error leaves it due for the next run; anything
else (an item this release cannot read, a bug) is counted, logged, and takes it out of the due index.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from typing import Any, Protocol

from ..observe.invocation import count
from ..protocol.errors import INTERNAL_ERROR
from ..storage.errors import ConflictError, StorageError
from ..storage.ports import TaskStore
from .durable import ENDED
from .execution import Executor, submit_all
from .model import TaskRecord, TaskStatus

logger = logging.getLogger("lambda_mcp")
RELEASED: dict[str, Any] = {"lease_owner": None, "lease_expires_at": 0.0, "due_at": 0.0, "wake_at": 0.0}
"""What a task drops when its run ends (final, parked or given back): its lease, its place in the due index
and its sleep (a sleeping task the sweeper queues is awake)."""


class Runtime(Protocol):
    """What the sweeper needs of the task runtime."""

    store: TaskStore
    executor: Executor
    clock: Callable[[], float]
    max_attempts: int
    requeue_after_seconds: float

    async def settle(self, record: TaskRecord, status: TaskStatus, **changes: Any) -> TaskRecord: ...


def failure(message: str) -> dict[str, Any]:
    return {"code": INTERNAL_ERROR, "message": message}


def gave_up(record: TaskRecord) -> dict[str, Any]:
    return failure(f"Task failed: its worker stopped before finishing, {record.attempts} times (timeout or crash)")


async def dead_letter(runtime: Runtime, task_id: str) -> str:
    """A message reached the dead-letter queue: counted whatever became of its task (the alarm's metric);
    its task is failed unless it finished, parked or is running."""
    count("TasksDeadLettered")
    now = runtime.clock()
    record = await runtime.store.get(task_id, now)
    if record is None or record.status != "working":
        return "skipped"
    if record.leased(now):
        return "skipped: claimed by a live lease"
    reason = "Task failed: its queue message could not be processed and went to the dead-letter queue"
    settled = await runtime.settle(record, "failed", error=failure(reason))
    return settled.status


CONCURRENCY = 16
"""Tasks of a page swept at once (a read and a write each); the page's messages then go out in batches."""
LAG_SECONDS = 0.5
"""How long to let the eventually consistent index catch up when a full page held only handled tasks."""


async def sweep(runtime: Runtime, limit: int, budget_seconds: float) -> dict[str, int]:
    counts = {"requeued": 0, "unclaimed": 0, "failed": 0, "dropped": 0, "expired": 0, "unsweepable": 0}
    counts |= {"errors": 0, "ambiguous": 0}
    seen: set[str] = set()
    deadline = time.monotonic() + budget_seconds
    room = asyncio.Semaphore(CONCURRENCY)

    async def one(task_id: str) -> str | None:
        async with room:
            if time.monotonic() >= deadline:
                return None
            try:
                return await _sweep_one(runtime, task_id, counts)
            except StorageError as exc:  # this task stays due: the next run sweeps it; the others go on
                counts["errors"] += 1
                logger.warning("sweeping task %s failed: %s", task_id, exc)
                return None
            except Exception as exc:  # one bad item must not stop every sweep (see _set_aside)
                await _set_aside(runtime, task_id, exc, counts)
                return None

    while time.monotonic() < deadline:
        page = await runtime.store.list_due(runtime.clock(), limit)
        due = [task_id for task_id in page if task_id not in seen]
        if not due:
            if len(page) < limit:  # dry
                break
            await asyncio.sleep(LAG_SECONDS)  # a full page of tasks this run handled: the index lags behind
            continue
        seen.update(due)
        requeued = [task_id for task_id in await asyncio.gather(*(one(task_id) for task_id in due)) if task_id]
        submitted = await submit_all(runtime.executor, requeued)  # the unsent are due again after requeue_after
        counts["requeued"] += len(submitted.sent)
        counts["errors"] += len(submitted.failed)
        counts["ambiguous"] += len(submitted.ambiguous)  # a batch that raised: maybe delivered, and due again
    return counts


async def _sweep_one(runtime: Runtime, task_id: str, counts: dict[str, int]) -> str | None:
    """What the sweeper does with one task of the index; the id when it is to be queued again."""
    now = runtime.clock()
    record = await runtime.store.get(task_id, now)  # the index is eventually consistent
    if record is None or not record.sweepable:  # expired (or final): out of the index for good
        await runtime.store.drop_due(task_id)
        counts["dropped"] += 1
        if record is None:  # the index holds working tasks only: this one expired while working
            counts["expired"] += 1
            count("TasksExpired")
        return None
    if record.due_at > now:
        return None
    status = getattr(runtime.executor, "status", None)  # the durable backend: ask Lambda, not a lease
    if status is not None:
        return await _reconcile(runtime, record, await status(record), counts)
    if record.attempts >= runtime.max_attempts:
        await runtime.settle(record, "failed", error=gave_up(record))
        counts["failed"] += 1
        return None
    requeued = record.replace(**{**RELEASED, "due_at": now + runtime.requeue_after_seconds}, updated_at=now)
    try:
        await runtime.store.save(requeued)
    except ConflictError:  # claimed, answered or cancelled meanwhile: its new state says what happens
        return None
    if record.attempts == 0 and not record.wake_at:  # no worker claimed it since its message was sent: lost
        counts["unclaimed"] += 1  # (or its create's answer was, and the client never saw the task)
        count("TasksSweptUnclaimed")
    return task_id


async def _reconcile(runtime: Runtime, record: TaskRecord, status: str | None, counts: dict[str, int]) -> str | None:
    """An overdue durable task and its execution (`status`, tasks/durable.py): none started (its start was
    lost) is started again, up to the attempts; one that ended fails the task; one still running is looked
    at again later, and its callback rung again (an answer whose doorbell was lost)."""
    now = runtime.clock()
    if status in ENDED:
        reason = f"Task failed: its durable execution ended ({status}) before the task finished"
        await runtime.settle(record, "failed", error=failure(reason))
        counts["failed"] += 1
        return None
    if status is None and record.attempts >= runtime.max_attempts:
        await runtime.settle(record, "failed", error=failure("Task failed: its durable execution never started"))
        counts["failed"] += 1
        return None
    attempts = record.attempts + 1 if status is None else record.attempts
    later = record.replace(due_at=now + runtime.requeue_after_seconds, attempts=attempts, updated_at=now)
    try:
        await runtime.store.save(later)
    except ConflictError:  # claimed, answered or cancelled meanwhile
        return None
    if status is None:
        counts["unclaimed"] += 1
        return record.task_id
    resume = getattr(runtime.executor, "resume", None)
    if record.callback_id is not None and resume is not None:
        try:
            await resume(record)
        except Exception:  # the next sweep rings again
            logger.warning("task %s: could not complete its durable callback", record.task_id, exc_info=True)
    return None


async def _set_aside(runtime: Runtime, task_id: str, exc: Exception, counts: dict[str, int]) -> None:
    """A task the sweep failed on for a reason other than storage: an item this release cannot read (a
    body that is not a record), or a bug. Counted (`TasksUnsweepable`), logged, and taken out of the due
    index: the index is read from its first keys, so left there it would come back first in every run
    (and enough of them would fill the page). It stays readable until it expires."""
    counts["unsweepable"] += 1
    count("TasksUnsweepable")
    logger.error("task %s cannot be swept; it leaves the due index", task_id, exc_info=exc)
    try:
        await runtime.store.drop_due(task_id)
    except StorageError:  # still due: the next run meets it again, and tries again
        logger.warning("task %s: could not take it out of the due index", task_id, exc_info=True)
