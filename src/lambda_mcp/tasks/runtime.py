"""`TaskRuntime`: create tasks durably, hand them to an executor, and apply get/update/cancel and run outcomes.

The runtime owns the rules; the store owns durability (conditional writes) and the executor owns
where a task runs (an asyncio task in `lambda-mcp dev`; the SQS worker in Lambda). A run re-executes
the tool from the top with every recorded answer, so a worker needs nothing but the record.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from ..storage.errors import ConflictError
from .model import TaskRecord, TaskStatus, new_task_id, transition
from .store import TaskStore

EXTENSION = "io.modelcontextprotocol/tasks"


class Executor(Protocol):
    async def submit(self, task_id: str) -> None:
        """Arrange for `TaskRuntime.run(task_id)` to happen (now or on another machine)."""

    def cancel(self, task_id: str) -> None:
        """Best effort: stop a run in progress on this machine (the durable status is what counts)."""


@dataclass
class Outcome:
    """How a run of the tool ended."""

    kind: Literal["completed", "failed", "input_required", "cancelled"]
    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None
    input_requests: dict[str, dict[str, Any]] | None = None


Execute = Callable[[TaskRecord, Callable[[], bool]], Awaitable[Outcome]]
"""Runs a task's request once (dispatch provides it): the record and a cancellation check."""


class TaskRuntime:
    def __init__(
        self,
        store: TaskStore,
        *,
        default_ttl_ms: int = 3_600_000,
        max_ttl_ms: int = 86_400_000,
        poll_interval_ms: int = 500,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.store = store
        self.default_ttl_ms = default_ttl_ms
        self.max_ttl_ms = max_ttl_ms
        self.poll_interval_ms = poll_interval_ms
        self.clock = clock
        self.executor: Executor | None = None
        self.execute: Execute | None = None

    async def create(
        self,
        *,
        owner: str,
        method: str,
        params: dict[str, Any],
        wire: Literal["legacy", "modern"],
        protocol_version: str,
        client_capabilities: dict[str, Any],
        answers: dict[str, Any] | None = None,
        requested_ttl_ms: int | None = None,
        session_id: str | None = None,
    ) -> TaskRecord:
        """Write the task (durable when this returns) and submit it."""
        if self.executor is None:
            raise RuntimeError("no task executor configured")
        now = self.clock()
        ttl_ms = min(requested_ttl_ms or self.default_ttl_ms, self.max_ttl_ms)
        record = TaskRecord(
            task_id=new_task_id(),
            owner=owner,
            method=method,
            params={k: v for k, v in params.items() if k not in ("inputResponses", "requestState", "task")},
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
        )
        await self.store.create(record)
        await self.executor.submit(record.task_id)
        return record

    async def get(self, task_id: str, owner: str) -> TaskRecord | None:
        record = await self.store.get(task_id, self.clock())
        return record if record is not None and record.owner == owner else None

    async def cancel(self, record: TaskRecord) -> TaskRecord:
        """Set `cancelled` (before answering) unless the task is already final; stop a local run."""
        while not record.terminal:
            try:
                record = await self.store.save(
                    transition(record, "cancelled", self.clock(), cancel_requested=True, input_requests={})
                )
            except ConflictError:
                fresh = await self.store.get(record.task_id, self.clock())
                if fresh is None:
                    break
                record = fresh
        if self.executor is not None:
            self.executor.cancel(record.task_id)
        return record

    async def answer(self, record: TaskRecord, responses: dict[str, Any]) -> TaskRecord:
        """Store answers for outstanding keys (others are ignored); resume the task once none is outstanding."""
        while record.status == "input_required":
            accepted = {k: v for k, v in responses.items() if k in record.input_requests}
            if not accepted:
                return record
            outstanding = {k: v for k, v in record.input_requests.items() if k not in accepted}
            status: TaskStatus = "input_required" if outstanding else "working"
            updated = transition(
                record,
                status,
                self.clock(),
                input_requests=outstanding,
                input_responses={**record.input_responses, **accepted},
            )
            try:
                record = await self.store.save(updated)
            except ConflictError:
                fresh = await self.store.get(record.task_id, self.clock())
                if fresh is None:
                    return record
                record = fresh
                continue
            if status == "working" and self.executor is not None:
                await self.executor.submit(record.task_id)
            return record
        return record

    async def run(self, task_id: str) -> TaskRecord | None:
        """Run a `working` task once and record how it ended; does nothing for any other status."""
        record = await self.store.get(task_id, self.clock())
        if record is None or record.status != "working" or self.execute is None:
            return record
        outcome = await self.execute(record, lambda: False)
        return await self._finish(record, outcome)

    async def _finish(self, record: TaskRecord, outcome: Outcome) -> TaskRecord:
        for _ in range(5):
            if record.terminal or outcome.kind == "cancelled":
                return record
            now = self.clock()
            if outcome.kind == "input_required":
                new = {k: v for k, v in (outcome.input_requests or {}).items() if k not in record.input_responses}
                updated = transition(record, "input_required", now, input_requests=new)
            elif outcome.kind == "completed":
                updated = transition(record, "completed", now, result=outcome.result)
            else:
                updated = transition(record, "failed", now, error=outcome.error)
            try:
                return await self.store.save(updated)
            except ConflictError:  # cancelled (a cancel wins) or answered meanwhile: re-read and decide
                fresh = await self.store.get(record.task_id, now)
                if fresh is None:
                    return record
                record = fresh
        return record


class InProcessExecutor:
    """Runs tasks as asyncio tasks in this process: the embedded default of `lambda-mcp dev`."""

    def __init__(self, runtime: TaskRuntime) -> None:
        self._runtime = runtime
        self._running: dict[str, asyncio.Task[Any]] = {}
        runtime.executor = self

    async def submit(self, task_id: str) -> None:
        task = asyncio.get_running_loop().create_task(self._runtime.run(task_id))
        self._running[task_id] = task
        task.add_done_callback(lambda _: self._running.pop(task_id, None))

    def cancel(self, task_id: str) -> None:
        running = self._running.get(task_id)
        if running is not None:
            running.cancel()


class ThreadExecutor:
    """Runs tasks on a background thread with its own event loop.

    `lambda-mcp dev --lambda` uses it as a stand-in for the SQS worker: the handler's own loop only
    runs while an invocation is in progress, as in Lambda, so tasks cannot live on it.
    """

    def __init__(self, runtime: TaskRuntime) -> None:
        import threading

        self._runtime = runtime
        self._loop = asyncio.new_event_loop()
        self._running: dict[str, asyncio.Task[Any]] = {}
        self._thread = threading.Thread(target=self._loop.run_forever, name="lambda-mcp-tasks", daemon=True)
        self._thread.start()
        runtime.executor = self

    async def submit(self, task_id: str) -> None:
        def start() -> None:
            task = self._loop.create_task(self._runtime.run(task_id))
            self._running[task_id] = task
            task.add_done_callback(lambda _: self._running.pop(task_id, None))

        self._loop.call_soon_threadsafe(start)

    def cancel(self, task_id: str) -> None:
        def stop() -> None:
            running = self._running.get(task_id)
            if running is not None:
                running.cancel()

        self._loop.call_soon_threadsafe(stop)
