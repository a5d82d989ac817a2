"""A task's conditional writes under the kit's one rule for writes whose outcome is unknown
(`storage/confirm.py`): a write reported failed (a conflict with its own retry, or an outage past the
client's retries) re-reads the task, and recognises its own write by the next version and its content.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from ..storage.confirm import confirmed
from ..storage.ports import TaskStore
from .model import TaskRecord

_VOLATILE = frozenset({"version", "updated_at"})


def holds(stored: TaskRecord, written: TaskRecord) -> bool:
    """Whether `stored` is `written` as the store keeps it (the next version, the same content): the write
    that was reported failed had landed before its answer was lost."""
    if stored.version != written.version + 1:
        return False
    mine, theirs = dataclasses.asdict(written), dataclasses.asdict(stored)
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
