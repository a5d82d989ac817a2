"""What a legacy task's runs send (progress, logs) goes to its session's event log, on the task's own
stream, for `tasks/result` to relay.

Each message is keyed by where the run sends it: its scope and its ordinal in that scope. A run is a
sequence of scopes: the top level before the first step is scope 0, the k-th step's function scope 2k-1,
the top level after it scope 2k (`ScopedCheckpoints` moves on at each step's start and end, whether the
step runs or an earlier run's result is given back). The message is the event at position
`scope * SCOPE + ordinal` of the stream, written only if that position is empty (`EventLog.put`). So a
re-run (after input, a crash, a redelivery) sends the same top-level messages at the same positions and
never logs one twice; a step whose result is recorded sends nothing, and shifts nothing after it; a message
whose write failed in an earlier run (dropped, past the client's retries) is logged by the next run that
sends it. Positions grow in the order the run sends, so `tasks/result` relays in that order, and a tool
without steps numbers its messages 1, 2, 3, ... as before.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

from ..protocol.ids import TaskStream
from ..server.steps import Checkpoints
from ..storage.errors import StorageError
from ..storage.ports import EventLog
from .model import TaskRecord

logger = logging.getLogger("lambda_mcp")
SCOPE = 100_000
"""Positions per scope: a scope's messages beyond it are dropped (with a warning)."""
LAST_POSITION = 9_999_999_999
"""The last position an event id and its sort key hold (10 digits): 99,999 scopes, about 50,000 steps."""


class TaskNotifier:
    """Where one run of a task sends its notifications (a `Notify`). 2026 tasks have no channel for progress
    or logs, so theirs are dropped; so are a task's without a session."""

    def __init__(self, events: EventLog | None, record: TaskRecord) -> None:
        self._events = events if record.session_id is not None and record.wire == "legacy" else None
        self._record = record
        self._stream = TaskStream(record.task_id).format()
        self._scope = 0
        self._sent = 0
        self._logged: set[int] | None = None
        """Positions earlier runs filled, read once, when the run first sends something: those are not
        written again (each would be a write refused by its condition)."""

    def boundary(self) -> None:
        """A step starts or ends: the next message opens the next scope."""
        self._scope += 1
        self._sent = 0

    async def __call__(self, message: dict[str, Any]) -> None:
        if self._events is None:
            return
        self._sent += 1
        position = self._scope * SCOPE + self._sent  # taken before any wait: the run's order, whatever storage does
        task_id, session_id = self._record.task_id, self._record.session_id
        assert session_id is not None
        if self._sent >= SCOPE or position > LAST_POSITION:
            logger.warning(
                "task %s: notification %d of scope %d is past the log's room", task_id, self._sent, self._scope
            )
            return
        if self._logged is None:
            self._logged = await _filled(self._events, session_id, self._stream, task_id)
        if position in self._logged:
            return
        try:  # kept as long as the task, not the session
            await self._events.put(session_id, self._stream, position, message, expires_at=self._record.expires_at)
        except StorageError:  # a notification lost to storage is the kit's trouble, not the tool's
            logger.warning("task %s: notification %d could not be logged", task_id, position, exc_info=True)


def notifier(events: EventLog | None, record: TaskRecord) -> TaskNotifier:
    """Where one run of `record` sends its notifications."""
    return TaskNotifier(events, record)


class ScopedCheckpoints:
    """A task's checkpoints (any backend's) with each step in a scope of the run's notifications of its own."""

    def __init__(self, checkpoints: Checkpoints, notify: TaskNotifier) -> None:
        self.checkpoints = checkpoints
        self._notify = notify

    async def step(self, name: str, run: Callable[[], Awaitable[Any]]) -> Any:
        self._notify.boundary()
        try:
            return await self.checkpoints.step(name, run)
        finally:
            self._notify.boundary()

    async def sleep(self, name: str, seconds: float) -> None:
        await self.checkpoints.sleep(name, seconds)


async def _filled(events: EventLog, session_id: str, stream: str, task_id: str) -> set[int]:
    """The positions of the stream earlier runs filled; none when they cannot be read (then every position
    is written, and the condition refuses the filled ones)."""
    try:
        return {event.seq for event in await events.read(session_id, stream)}
    except StorageError:
        logger.warning("task %s: could not read what earlier runs logged", task_id, exc_info=True)
        return set()
