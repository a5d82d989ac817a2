"""`TaskRuntime`: create tasks durably, hand them to an executor, and apply get/update/cancel and run outcomes.

The runtime owns the rules; the store owns durability (conditional writes) and the executor owns
where a task runs (an asyncio task in `lambda-mcp dev`; the SQS worker in Lambda). A run re-executes
the tool from the top with every recorded answer, so a worker needs nothing but the record.
Workers claim a task with a lease; the sweeper re-enqueues tasks whose lease ran out and fails
them after `max_attempts`; a dead-lettered message fails its task. A run that sleeps (`ctx.sleep`,
tasks/steps.py) leaves the task `working` and asleep; the executor, or the sweeper, runs it again.
"""

from __future__ import annotations

import contextlib
import json
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any, Literal

from ..observe.invocation import count
from ..protocol.ids import new_task_id
from ..server.steps import Checkpoints
from ..storage.errors import ConflictError
from ..storage.ports import EventLog, TaskStore
from . import creation, sweeper
from .execution import Execute, Executor, Outcome, SubmitFailed, TaskRun
from .model import TaskRecord, TaskStatus, transition
from .notify import ScopedCheckpoints, notifier
from .steps import StoredCheckpoints, asleep
from .sweeper import RELEASED, failure
from .watch import run_watched
from .writes import saved, stop_flag

logger = logging.getLogger("lambda_mcp")


def _counted(record: TaskRecord) -> TaskRecord:
    """A task just saved: count it when it reached a final status (`TasksCompleted`, `Failed`, `Cancelled`)."""
    if record.terminal:
        count(f"Tasks{record.status.capitalize()}")
    return record


class TaskRuntime:
    def __init__(
        self,
        store: TaskStore,
        executor: Executor,
        execute: Execute,
        *,
        events: EventLog | None = None,
        default_ttl_ms: int = 3_600_000,
        max_ttl_ms: int = 86_400_000,
        poll_interval_ms: int = 500,
        max_attempts: int = 3,
        requeue_after_seconds: float = 900.0,
        worker_timeout_seconds: float = 900.0,
        sweep_seconds: float = 300.0,
        max_record_bytes: int = 350_000,
        skip_waits: bool = False,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.store = store
        self.events = events
        self.default_ttl_ms = default_ttl_ms
        self.max_ttl_ms = max_ttl_ms
        self.poll_interval_ms = poll_interval_ms
        self.max_attempts = max_attempts
        self.requeue_after_seconds = requeue_after_seconds
        self.sweep_seconds = sweep_seconds
        lease = worker_timeout_seconds + min(5.0, worker_timeout_seconds * 0.1)
        cycle = max(lease, requeue_after_seconds) + sweep_seconds
        self.min_ttl_ms = int(((max_attempts + 1) * cycle + sweep_seconds) * 1000)
        """No task lives shorter than its last chance: every attempt may take a lease and wait a sweep before
        the next, and one more sweep fails it; plus one cycle of slack for a delivery that ended before
        its claim (a batch-mate crashed the invocation), which costs a cycle but no attempt. A shorter TTL
        would let a crashed task expire `working`."""
        self.max_record_bytes = max_record_bytes
        """DynamoDB items are at most 400 KB; a result that would not fit fails the task with a clear error."""
        self.skip_waits = skip_waits
        """Time skipping (`lambda-mcp dev`, the test client): a task's sleep ends its run, which goes on at once."""
        self.clock = clock
        self.executor = executor
        self.execute = execute

    async def create(
        self,
        *,
        task_id: str | None = None,
        owner: str,
        method: str,
        params: dict[str, Any],
        wire: Literal["legacy", "modern"],
        protocol_version: str,
        client_capabilities: dict[str, Any],
        answers: dict[str, Any] | None = None,
        requested_ttl_ms: int | None = None,
        session_id: str | None = None,
        request_id: str | int | None = None,
        log_level: str | None = None,
        scopes: list[str] | None = None,
        claims: dict[str, Any] | None = None,
    ) -> TaskRecord:
        """Write the task (durable when this returns) and submit it; `SubmitFailed` if it cannot be queued.

        A retry of the request that created a task within `creation.RETRY_WINDOW_SECONDS` gets that task
        instead (see tasks/creation.py for the retry key, the confirmed write, the void and a failed send)."""
        now = self.clock()
        # never shorter than the requeue window: the sweeper must get one chance at a lost message
        ttl_ms = max(min(requested_ttl_ms or self.default_ttl_ms, self.max_ttl_ms), self.min_ttl_ms)
        meta = params.get("_meta")
        progress_token = meta.get("progressToken") if isinstance(meta, dict) else None
        record = TaskRecord(
            task_id=task_id or new_task_id(),
            owner=owner,
            method=method,
            params=creation.kept(params),
            created_at=now,
            updated_at=now,
            expires_at=now + ttl_ms / 1000,
            ttl_ms=ttl_ms,
            poll_interval_ms=self.poll_interval_ms,
            wire=wire,
            input_responses=dict(answers or {}),
            protocol_version=protocol_version,
            client_capabilities=client_capabilities,
            session_id=session_id,
            request_id=request_id,
            log_level=log_level,
            scopes=scopes,
            claims=claims or {},
            progress_token=progress_token if isinstance(progress_token, str | int) else None,
            due_at=now + self.requeue_after_seconds,
        )
        key = creation.retry_key(record)
        if key is not None:
            first = await creation.earlier(self.store, self.clock, key, record)
            if first is not None:
                logger.info("a retry of the request that created task %s: answered with it", first.task_id)
                return first
        await creation.write(self.store, self.clock, record)
        count("TasksCreated")
        try:
            await self.executor.submit(record.task_id)
        except Exception as exc:  # unless a worker has it (the send landed), fail it: the client tries again
            logger.exception("could not queue new task %s", record.task_id)
            delivered = await creation.unqueued(self.store, self.clock, record)
            if delivered is None:
                raise SubmitFailed(str(exc)) from exc
            return delivered
        return record

    async def _resubmit(self, record: TaskRecord) -> None:
        """Queue a task the client already holds (resumed by its answers). If the queue is down, the task
        stays `working` and due now, so the sweeper queues it on its next run: its answers are never lost."""
        resume = getattr(self.executor, "resume", None)  # the durable backend: its callback, not a new run
        try:
            await (resume(record) if resume is not None else self.executor.submit(record.task_id))
        except Exception:
            logger.exception("could not queue task %s; the sweeper will", record.task_id)
            with contextlib.suppress(ConflictError):  # a cancel or a claim moved it on: nothing to hand over
                await self.store.save(record.replace(due_at=self.clock()))

    async def get(self, task_id: str, owner: str) -> TaskRecord | None:
        record = await self.store.get(task_id, self.clock())
        return record if record is not None and record.owner == owner else None

    async def cancel(self, record: TaskRecord) -> TaskRecord:
        """Set `cancelled` (before answering) unless the task is already final; stop a local run, and leave
        the flag a worker running it polls (a few bytes, where the task's item may be 350 KB)."""
        record = await self._settle(record, "cancelled", cancel_requested=True, input_requests={})
        if record.status == "cancelled":
            await self._stop(record)
        self.executor.cancel(record.task_id)
        return record

    async def _stop(self, record: TaskRecord) -> None:
        """The stop flag a running worker polls (tasks/writes.py); on the durable backend, also stop the
        execution (best effort: a parked execution times out with the task anyway)."""
        await stop_flag(self.store, record)
        stop = getattr(self.executor, "stop", None)
        if stop is not None:
            await stop(record)

    async def _settle(self, record: TaskRecord, status: TaskStatus, **changes: Any) -> TaskRecord:
        """Move a task to a final status unless it already is final.

        A write whose answer was lost is recognised by the re-read (tasks/writes.py). After a lost race a
        cancel re-reads and writes again: it wins over anything not final. A failure (a dead letter, the
        sweeper giving up) that finds the task claimed since by a live lease leaves it to that worker:
        the message was delivered, and the record found is returned. Failing a task under a lease writes
        its stop flag, so that run stops."""
        while not record.terminal:
            now = self.clock()
            updated = transition(record, status, now, **{**RELEASED, **changes})
            try:
                settled = await saved(self.store, self.clock, updated, f"settling task {record.task_id}")
            except ConflictError:
                fresh = await self.store.get(record.task_id, self.clock())
                if fresh is None:
                    break
                if status != "cancelled" and fresh.leased(self.clock()):
                    return fresh
                record = fresh
                continue
            if status != "cancelled" and record.leased(now):
                await self._stop(record)
            return _counted(settled)
        return record

    async def answer(self, record: TaskRecord, responses: dict[str, Any]) -> TaskRecord:
        """Store answers for outstanding keys (others are ignored); resume the task once none is outstanding.

        An answer whose write may have landed is confirmed by a re-read and then queues the task as a
        successful one does. The same answers sent again (a client's retry of an answer whose write landed
        unseen) queue the task again while it waits for a worker: a duplicate message is harmless."""
        while record.status == "input_required":
            accepted = {k: v for k, v in responses.items() if k in record.input_requests}
            if not accepted:
                break
            outstanding = {k: v for k, v in record.input_requests.items() if k not in accepted}
            status: TaskStatus = "input_required" if outstanding else "working"
            now = self.clock()
            updated = transition(
                record,
                status,
                now,
                input_requests=outstanding,
                input_responses={**record.input_responses, **accepted},
                due_at=now + self.requeue_after_seconds if status == "working" else 0.0,
            )
            try:
                record = await saved(self.store, self.clock, updated, f"answering task {record.task_id}")
            except ConflictError:
                fresh = await self.store.get(record.task_id, self.clock())
                if fresh is None:
                    return record
                record = fresh
                continue
            if status == "working":
                await self._resubmit(record)
            return record
        waiting = record.status == "working" and not record.leased(self.clock())
        if responses and waiting and all(k in record.input_responses for k in responses):
            await self._resubmit(record)
        return record

    # -- running ----------------------------------------------------------------------------
    def task_run(
        self,
        record: TaskRecord,
        is_cancelled: Callable[[], bool] = lambda: False,
        checkpoints: Checkpoints | None = None,
    ) -> TaskRun:
        """What one run of `record` gets: its notifier (tasks/notify.py) and its checkpoints, by default kept
        in the task store (tasks/steps.py; a durable backend passes its own), each step in a scope of the
        run's notifications of its own, so that a step's messages keep their keys whether it runs or not."""
        notify = notifier(self.events, record)
        longest = self.longest(record)
        kept = checkpoints or StoredCheckpoints(
            self.store,
            record,
            self.clock,
            keep_until=longest,
            latest_wake=longest - self.min_ttl_ms / 1000,
            skip_waits=self.skip_waits,
        )
        return TaskRun(is_cancelled, notify, ScopedCheckpoints(kept, notify))

    async def run(self, task_id: str) -> TaskRecord | None:
        """Run a `working` task once in this process and record how it ended (the in-process executor)."""
        record = await self.store.get(task_id, self.clock())
        if record is None or record.status != "working":
            return record
        if record.wake_at > self.clock():  # woken early (the executor's timer): sleep on
            await self._wake(record)
            return record
        outcome = await self.execute(record, self.task_run(record))
        return await self._finish(record, outcome)

    async def work(self, task_id: str, worker_id: str, lease_seconds: float) -> str:
        """A worker's handling of one queue message: claim the task with a lease, run it, record the end.

        Returns what happened (for logs and tests). A message for a task that is unknown, final,
        parked, cancelled or claimed by a live lease does nothing: redelivery is harmless. Raises
        only when storage fails (the message is then retried).
        """
        now = self.clock()
        record = await self.store.get(task_id, now)
        if record is None:
            return "skipped: unknown or expired"
        if record.status != "working":
            return f"skipped: {record.status}"
        if record.leased(now):
            return "skipped: claimed by a live lease"
        if record.wake_at > now:  # an early message: the sweeper runs it when it is due
            return "skipped: asleep"
        if record.attempts >= self.max_attempts:
            await self._settle(record, "failed", error=sweeper.gave_up(record))
            return "failed: attempts exhausted"
        lease_end = now + lease_seconds
        claim = record.replace(
            lease_owner=worker_id,
            lease_expires_at=lease_end,
            attempts=record.attempts + 1,
            due_at=lease_end,
            wake_at=0.0,
        )
        try:  # a claim whose answer was lost is recognised by the re-read, and runs
            claimed = await saved(self.store, self.clock, claim.replace(updated_at=now), "a claim")
        except ConflictError:
            return "skipped: changed while claiming"  # another worker claimed it, or it was cancelled
        outcome = await self._run_watched(claimed)
        finished = await self._finish(claimed, outcome)
        if outcome.kind == "sleeping" and not finished.terminal:
            return "asleep"
        return "cancelled" if outcome.kind == "cancelled" else finished.status

    async def _run_watched(self, record: TaskRecord) -> Outcome:
        """Run with a watcher that stops the run when the task is cancelled (tasks/watch.py)."""

        def start(is_cancelled: Callable[[], bool]) -> Awaitable[Outcome]:
            return self.execute(record, self.task_run(record, is_cancelled))

        return await run_watched(self.store, record, start, self.clock)

    async def finish(self, record: TaskRecord, outcome: Outcome, callback_id: str | None = None) -> TaskRecord:
        """Record how a run ended (a backend that runs the tool itself: tasks/durable_run.py); a park keeps
        `callback_id`, the durable callback that resumes the task."""
        return await self._finish(record, outcome, callback_id)

    async def _finish(self, record: TaskRecord, outcome: Outcome, callback_id: str | None = None) -> TaskRecord:
        if outcome.kind == "completed" and outcome.result is not None:
            size = len(json.dumps([outcome.result, record.params, record.input_responses], separators=(",", ":")))
            if size > self.max_record_bytes:
                outcome = Outcome(
                    "failed",
                    error=failure(
                        f"Task result too large to store: {size} bytes; the limit is {self.max_record_bytes} bytes"
                        " (a DynamoDB item holds at most 400 KB). Return a resource link to large content instead."
                    ),
                )
        for _ in range(5):
            if record.terminal or outcome.kind == "cancelled":
                return record
            now = self.clock()
            if outcome.kind == "input_required":
                # a park is an outcome: `attempts` counts runs in a row that ended without one (crashes)
                new = {k: v for k, v in (outcome.input_requests or {}).items() if k not in record.input_responses}
                parked = {"input_requests": new, "attempts": 0, "callback_id": callback_id, **RELEASED}
                updated = transition(record, "input_required", now, **parked)
            elif outcome.kind == "completed":
                updated = transition(record, "completed", now, result=outcome.result, **RELEASED)
            elif outcome.kind == "sleeping":  # an outcome too: the task runs again when it wakes
                updated = asleep(record, outcome.wake_at, now, self.longest(record), self.min_ttl_ms / 1000)
            else:  # a JSON-RPC error, or (2025-11-25) a tool result with isError
                updated = transition(record, "failed", now, error=outcome.error, result=outcome.result, **RELEASED)
            try:  # a finish whose answer was lost is recognised by the re-read: done
                finished = _counted(await saved(self.store, self.clock, updated, f"finishing task {record.task_id}"))
                if outcome.kind == "sleeping":
                    await self._wake(finished)
                return finished
            except ConflictError:  # cancelled (a cancel wins) or answered meanwhile: re-read and decide
                fresh = await self.store.get(record.task_id, self.clock())
                if fresh is None:
                    return record
                record = fresh
        return record

    def longest(self, record: TaskRecord) -> float:
        """The latest `record` may live: its TTL grows to cover its sleeps, up to the longest TTL."""
        return max(record.expires_at, record.created_at + self.max_ttl_ms / 1000)

    async def _wake(self, record: TaskRecord) -> None:
        """Have the executor run a sleeping task when it wakes; if it cannot, the sweeper will (it is due then)."""
        try:
            await self.executor.submit_later(record.task_id, record.wake_at - self.clock())
        except Exception:
            logger.exception("could not schedule the wake-up of task %s; the sweeper will", record.task_id)

    # -- failure paths: dead letters and the sweeper (tasks/sweeper.py) -----------------------
    async def settle(self, record: TaskRecord, status: TaskStatus, **changes: Any) -> TaskRecord:
        return await self._settle(record, status, **changes)

    async def dead_letter(self, task_id: str) -> str:
        """A task's message reached the dead-letter queue: fail it, unless it finished, parked or is running."""
        return await sweeper.dead_letter(self, task_id)

    async def sweep(self, limit: int = 100, budget_seconds: float = 60.0) -> dict[str, int]:
        """Re-enqueue working tasks whose lease ran out, fail those out of attempts, drop expired and final
        ones from the due index: every shard, page after page, within `budget_seconds`."""
        return await sweeper.sweep(self, limit, budget_seconds)
