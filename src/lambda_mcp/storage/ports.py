"""The persistence ports the kit depends on; adapters implement them for memory and for DynamoDB.

Every state change is conditional (a lost condition raises `ConflictError` or `NotFoundError`),
and every read filters on expiry, because TTL deletion is late or absent on some backends.
"""

from __future__ import annotations

from typing import Any, Protocol

from .records import CallRecord, Change, SessionRecord, StepRecord, StoredEvent, TaskRecord


class SessionStore(Protocol):
    async def create(self, record: SessionRecord) -> None:
        """Store a new session. Raises `ConflictError` if the id exists."""

    async def get(self, session_id: str, now: float) -> SessionRecord | None:
        """The live session, or None when unknown, expired or terminated."""

    async def touch(self, session_id: str, now: float, expires_at: float) -> None:
        """Slide the expiry of a live session. Raises `NotFoundError`."""

    async def set_log_level(self, session_id: str, level: str) -> None:
        """Raises `NotFoundError` for a session that is not live."""

    async def subscribe(self, session_id: str, uri: str, subscribed: bool, *, limit: int | None = None) -> None:
        """Add (or remove) a resource subscription. Raises `NotFoundError`, and `LimitExceeded` when adding
        a new one to a session that already holds `limit`."""

    async def terminate(self, session_id: str) -> None:
        """End a live session; later reads return None. Raises `NotFoundError`."""


class EventLog(Protocol):
    async def append(
        self, session_id: str, stream_id: str, message: dict[str, object] | None, *, expires_at: float | None = None
    ) -> StoredEvent:
        """Append one event to a session stream and return it with its event id. It lives as long as the
        log's own TTL, or until `expires_at` (a task's events live as long as the task). An append whose
        answer was lost and whose retry met its own write is a success."""

    async def put(
        self,
        session_id: str,
        stream_id: str,
        seq: int,
        message: dict[str, object] | None,
        *,
        expires_at: float | None = None,
    ) -> bool:
        """Write the event at position `seq` (from 1) of a stream its writer numbers, unless that position is
        taken: a conditional write, so writing a position again (a re-run, a retry that met its own first
        attempt) is a no-op, and a position an earlier write missed is filled later. True if this call
        wrote it. Positions may have gaps; `read` and `after` go in position order. A stream is numbered
        either by `append` or by its writer with `put`, never both."""

    async def after(self, session_id: str, event_id: str) -> tuple[str, list[StoredEvent]] | None:
        """The stream an event id belongs to and that stream's events after it; None if unknown."""

    async def get(self, session_id: str, event_id: str) -> StoredEvent | None:
        """The event with this id, or None if unknown."""

    async def read(self, session_id: str, stream_id: str, after_seq: int = 0) -> list[StoredEvent]:
        """A stream's events with `seq > after_seq`, in order (empty for an unknown stream)."""


class CallStore(Protocol):
    """Suspended legacy calls: written by the instance running the call, answered and cancelled from any."""

    async def start(self, record: CallRecord) -> CallRecord:
        """Record a call's first suspension, replacing any earlier call on the stream (a reused request id)
        but keeping a cancellation that already arrived. Returns the record as stored."""

    async def get(self, session_id: str, stream_id: str, now: float) -> CallRecord | None:
        """The live call (a consistent read), or None."""

    async def save(self, record: CallRecord) -> CallRecord:
        """Write the runner's fields if the stored call still has `record.nonce` and `record.version`.
        Raises `ConflictError` when another run saved first."""

    async def answer(self, session_id: str, stream_id: str, nonce: str, key: str, response: dict[str, Any]) -> bool:
        """Store the client's response for `key` once; False if the call or nonce does not match, or the
        key was already answered."""

    async def cancel(self, session_id: str, stream_id: str, now: float) -> CallRecord | None:
        """Flag the call (or marker) on the stream as cancelled and return it; None, writing nothing, when
        there is none (a cancel for a request id the session never used)."""


class ChangeLog(Protocol):
    """The change feed every instance and the worker write and every listener polls (short-lived entries)."""

    async def publish(self, kind: str, uri: str | None, now: float, principal: str | None = None) -> Change:
        """Append a change; readers see it with `since` from any cursor before it."""

    async def since(self, cursor: str, now: float, limit: int = 100) -> list[Change]:
        """Live changes after `cursor`, oldest first (entries expire an hour after they are published: a
        cursor older than that reads from an hour ago)."""


class TaskStore(Protocol):
    async def create(self, record: TaskRecord) -> None:
        """Store a new task durably (readable by `get` when this returns). Raises `ConflictError` if the id exists."""

    async def get(self, task_id: str, now: float) -> TaskRecord | None:
        """The task, or None when unknown or expired."""

    async def save(self, record: TaskRecord) -> TaskRecord:
        """Write `record` over the stored one if the stored one still has `record.version` and is not final.

        Returns the record as stored (version + 1). Raises `ConflictError` when the condition fails.
        """

    async def void(self, record: TaskRecord) -> TaskRecord:
        """Write `record` (a created task moved to a final status, at version 0) if the stored one is still at
        version 0 (no worker claimed it, nothing changed it) or there is none: then it stands in for the
        create, so a create that lands late fails its condition and never runs. Returns the record as
        stored (version 1). Raises `ConflictError` when the stored task moved on."""

    async def bind_retry_key(
        self, key: str, task_id: str, now: float, expires_at: float, *, replacing: str | None = None
    ) -> None:
        """Bind a request's retry key to the task it created, until `expires_at`: only if no live binding
        exists, or (`replacing`) only if the key is bound to that task. Raises `ConflictError` otherwise."""

    async def retry_key_task(self, key: str, now: float) -> str | None:
        """The task a live binding of the retry key names (a consistent read), or None."""

    async def list_owned(
        self, owner: str, now: float, cursor: str | None = None, limit: int = 50
    ) -> tuple[list[TaskRecord], str | None]:
        """The owner's live tasks, oldest first, a page at a time (no Scan: an index by owner), as `listed`
        records: without their request, result, error and inputs (`get` one for those)."""

    async def list_due(self, now: float, limit: int = 100) -> list[str]:
        """Ids of `working` tasks whose `due_at` has passed, most overdue first (no Scan: a sparse index).
        Expired tasks are listed too, until `drop_due` takes them out: expiry is no reason to hide a row,
        and a row that stays listed can be cleaned (expired rows never fill a page for good)."""

    async def mark_stopped(self, task_id: str, expires_at: float) -> None:
        """Leave the small flag a running worker polls for (`stopped`): the task was cancelled."""

    async def stopped(self, task_id: str, now: float) -> bool:
        """Whether the task was cancelled (`mark_stopped`): what a running worker polls once a second, so it
        reads a flag of a few bytes, never the task's item (up to 350 KB)."""

    async def drop_due(self, task_id: str) -> None:
        """Take a task out of the due index whatever its state (an expired one included); no-op if absent."""

    # A task's checkpoints (`ctx.step`, `ctx.sleep`: tasks/steps.py), each an item of its own beside the task.
    async def steps(self, task_id: str, now: float) -> dict[str, StepRecord]:
        """The task's live checkpoints by name (a consistent read of their own items, never of the task's)."""

    async def start_step(self, task_id: str, name: str, run: str, expires_at: float) -> None:
        """Mark the checkpoint `name` started by `run`, only where none is recorded. Raises `ConflictError`."""

    async def finish_step(self, task_id: str, name: str, run: str, result: Any, expires_at: float) -> None:
        """Record the checkpoint `name` done with `result` (JSON) by `run`, over nothing or a started mark,
        never over a finished one. Raises `ConflictError`."""

    async def drop_step(self, task_id: str, name: str, run: str) -> None:
        """Forget the checkpoint `name` if `run` started it and it is not done (its function raised, so a
        later run runs it again); a no-op otherwise."""
