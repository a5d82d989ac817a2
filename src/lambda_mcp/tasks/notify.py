"""What a legacy task's runs send (progress, logs) goes to its session's event log, on the task's own
stream, for `tasks/result` to relay.

Each message is keyed by its ordinal in the run: the n-th message a run sends is the event at position n
of the stream, written only if that position is empty (`EventLog.put`). A re-run (after input, a crash,
a redelivery) sends the same messages in the same order, so it never logs one twice, and a message whose
write failed in an earlier run (dropped, past the client's retries) is logged by the next run that sends
it. A write whose answer was lost and whose retry met its own write is the same no-op.
"""

from __future__ import annotations

import logging
from typing import Any

from ..protocol.ids import TaskStream
from ..storage.errors import StorageError
from ..storage.ports import EventLog
from .execution import Notify
from .model import TaskRecord

logger = logging.getLogger("lambda_mcp")


async def _dropped(message: dict[str, Any]) -> None:
    return None


def notifier(events: EventLog | None, record: TaskRecord) -> Notify:
    """Where one run of `record` sends its notifications. (2026 tasks have no channel for progress or logs,
    so theirs are dropped; so are a task's without a session.)"""
    session_id = record.session_id
    if events is None or session_id is None or record.wire != "legacy":
        return _dropped
    stream = TaskStream(record.task_id).format()
    sent = 0
    logged: set[int] | None = None
    """Positions earlier runs filled, read once, when the run first sends something: those are not
    written again (each would be a write refused by its condition)."""

    async def notify(message: dict[str, Any]) -> None:
        nonlocal sent, logged
        sent += 1
        ordinal = sent  # taken before any wait: the run's order, whatever the storage does
        if logged is None:
            logged = await _filled(events, session_id, stream, record.task_id)
        if ordinal in logged:
            return
        try:  # kept as long as the task, not the session
            await events.put(session_id, stream, ordinal, message, expires_at=record.expires_at)
        except StorageError:  # a notification lost to storage is the kit's trouble, not the tool's
            logger.warning("task %s: notification %d could not be logged", record.task_id, ordinal, exc_info=True)

    return notify


async def _filled(events: EventLog, session_id: str, stream: str, task_id: str) -> set[int]:
    """The positions of the stream earlier runs filled; none when they cannot be read (then every position
    is written, and the condition refuses the filled ones)."""
    try:
        return {event.seq for event in await events.read(session_id, stream)}
    except StorageError:
        logger.warning("task %s: could not read what earlier runs logged", task_id, exc_info=True)
        return set()
