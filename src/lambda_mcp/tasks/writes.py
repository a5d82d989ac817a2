"""A task's conditional writes under the kit's one rule for writes whose outcome is unknown
(`storage/confirm.py`): a write reported failed (a conflict with its own retry, or an outage past the
client's retries) re-reads the task, and recognises its own write by the next version and its content.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

from ..storage.confirm import confirmed
from ..storage.errors import StorageError
from ..storage.ports import TaskStore
from .model import TaskRecord

logger = logging.getLogger("lambda_mcp")
STOP_ATTEMPTS = 3
"""Tries of a cancel's stop-flag write (each with the client's own retries), STOP_BACKOFF_SECONDS apart
(doubling): the watcher also reads the task's status, but only once a minute."""
STOP_BACKOFF_SECONDS = 0.1
_VOLATILE = frozenset({"version", "updated_at"})


def holds(stored: TaskRecord, written: TaskRecord) -> bool:
    """Whether `stored` is `written` as the store keeps it (the next version, the same content): the write
    that was reported failed had landed before its answer was lost."""
    if stored.version != written.version + 1:
        return False
    mine, theirs = written.as_dict(), stored.as_dict()
    return all(mine[k] == theirs[k] for k in mine if k not in _VOLATILE)


async def saved(store: TaskStore, clock: Callable[[], float], updated: TaskRecord, what: str) -> TaskRecord:
    """`store.save(updated)`; when its answer is lost, the re-read record if it is this write's own.

    Raises `ConflictError` when another write won, `StorageUnavailable` when the write did not land (yet),
    and `Unconfirmed` when nobody can tell."""
    return await confirmed(
        lambda: store.save(updated), lambda: store.get(updated.task_id, clock()), lambda s: holds(s, updated), what
    )


async def voided(store: TaskStore, clock: Callable[[], float], failed: TaskRecord, what: str) -> TaskRecord:
    """`store.void(failed)` under the same rule (`failed` is the created record, moved to `failed`)."""
    return await confirmed(
        lambda: store.void(failed), lambda: store.get(failed.task_id, clock()), lambda s: holds(s, failed), what
    )


async def stop_flag(store: TaskStore, record: TaskRecord) -> None:
    """Write the task's stop flag, trying again a few times (`STOP_ATTEMPTS`): the status written is what
    counts, and the watcher reads it too, but only now and then (tasks/watch.py)."""
    for attempt in range(STOP_ATTEMPTS):
        try:
            await store.mark_stopped(record.task_id, record.expires_at)
            return
        except StorageError:
            if attempt + 1 == STOP_ATTEMPTS:  # a running worker's finish is refused regardless
                logger.warning("task %s: the stop flag could not be written", record.task_id, exc_info=True)
                return
        await asyncio.sleep(STOP_BACKOFF_SECONDS * 2**attempt)
