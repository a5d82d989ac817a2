"""The task store port and its in-memory adapter (the reference semantics the DynamoDB adapter must match)."""

from __future__ import annotations

import base64
import copy
import json
import threading
from typing import Protocol

from ..storage.errors import ConflictError
from .model import TaskRecord, listed


class TaskStore(Protocol):
    async def create(self, record: TaskRecord) -> None:
        """Store a new task durably (readable by `get` when this returns). Raises `ConflictError` if the id exists."""

    async def get(self, task_id: str, now: float) -> TaskRecord | None:
        """The task, or None when unknown or expired."""

    async def save(self, record: TaskRecord) -> TaskRecord:
        """Write `record` over the stored one if the stored one still has `record.version` and is not final.

        Returns the record as stored (version + 1). Raises `ConflictError` when the condition fails.
        """

    async def list_owned(
        self, owner: str, now: float, cursor: str | None = None, limit: int = 50
    ) -> tuple[list[TaskRecord], str | None]:
        """The owner's live tasks, oldest first, a page at a time (no Scan: an index by owner), as `listed`
        records: without their request, result, error and inputs (`get` one for those)."""

    async def list_due(self, now: float, limit: int = 100) -> list[str]:
        """Ids of `working` tasks whose `due_at` has passed, most overdue first (no Scan: a sparse index).
        Expired tasks are listed too, until `drop_due` takes them out: expiry is no reason to hide a row,
        and a row that stays listed can be cleaned (expired rows never fill a page for good)."""

    async def drop_due(self, task_id: str) -> None:
        """Take a task out of the due index whatever its state (an expired one included); no-op if absent."""


def encode_cursor(position: dict[str, object]) -> str:
    return base64.urlsafe_b64encode(json.dumps(position, separators=(",", ":")).encode()).decode()


def decode_cursor(cursor: str) -> dict[str, object]:
    """Raises ValueError for anything that is not a cursor this store issued."""
    try:
        position = json.loads(base64.urlsafe_b64decode(cursor.encode()))
    except (ValueError, UnicodeDecodeError) as exc:
        raise ValueError("invalid cursor") from exc
    if not isinstance(position, dict):
        raise ValueError("invalid cursor")
    return position


class InMemoryTaskStore:
    """Safe to share between the request loop and worker threads (`lambda-mcp dev --lambda`): every method
    holds a lock."""

    def __init__(self) -> None:
        self._items: dict[str, TaskRecord] = {}
        self._lock = threading.Lock()

    async def create(self, record: TaskRecord) -> None:
        with self._lock:
            if record.task_id in self._items:
                raise ConflictError(f"task {record.task_id} exists")
            self._items[record.task_id] = copy.deepcopy(record)

    async def get(self, task_id: str, now: float) -> TaskRecord | None:
        with self._lock:
            record = self._items.get(task_id)
            return copy.deepcopy(record) if record is not None and record.live(now) else None

    async def save(self, record: TaskRecord) -> TaskRecord:
        with self._lock:
            stored = self._items.get(record.task_id)
            if stored is None or stored.version != record.version or stored.terminal:
                raise ConflictError(f"task {record.task_id} changed or is final")
            saved = copy.deepcopy(record)
            saved.version += 1
            self._items[record.task_id] = saved
            return copy.deepcopy(saved)

    async def list_owned(
        self, owner: str, now: float, cursor: str | None = None, limit: int = 50
    ) -> tuple[list[TaskRecord], str | None]:
        with self._lock:
            owned = [r for r in self._items.values() if r.owner == owner and r.live(now)]
        mine = sorted(
            owned,
            key=lambda r: (r.created_at, r.task_id),
        )
        if cursor is not None:
            position = decode_cursor(cursor)
            after = (float(str(position.get("c", 0))), str(position.get("t", "")))
            mine = [r for r in mine if (r.created_at, r.task_id) > after]
        page = mine[:limit]
        more = len(mine) > limit
        last = page[-1] if page else None
        next_cursor = encode_cursor({"c": last.created_at, "t": last.task_id}) if more and last else None
        return [listed(copy.deepcopy(r)) for r in page], next_cursor

    async def list_due(self, now: float, limit: int = 100) -> list[str]:
        with self._lock:
            due = [r for r in self._items.values() if r.sweepable and r.due_at <= now]
        due.sort(key=lambda r: (r.due_at, r.task_id))
        return [r.task_id for r in due[:limit]]

    async def drop_due(self, task_id: str) -> None:
        with self._lock:
            stored = self._items.get(task_id)
            if stored is not None:
                stored.due_at = 0.0
