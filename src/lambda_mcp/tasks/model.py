"""The task state machine, as pure data: which status may follow which, and what changes with it (the
record itself is storage's: `storage.records.TaskRecord`).

`working -> input_required | completed | failed | cancelled`, `input_required -> working |
completed | failed | cancelled`; `completed`, `failed` and `cancelled` are final. Stores enforce the
same rule with conditional writes (a write is conditioned on the version read and on the stored
status not being final), so a cancel and a completion racing each other end in exactly one.
"""

from __future__ import annotations

from typing import Any

from ..storage.records import TERMINAL, TaskRecord, TaskStatus

__all__ = ["ALLOWED", "TERMINAL", "InvalidTransition", "TaskRecord", "TaskStatus", "transition"]

ALLOWED: dict[str, frozenset[str]] = {
    "working": frozenset({"input_required", "completed", "failed", "cancelled"}),
    "input_required": frozenset({"working", "completed", "failed", "cancelled"}),
}


class InvalidTransition(Exception):
    """A status change the state machine does not allow (for example anything after a final status)."""


def transition(record: TaskRecord, status: TaskStatus, now: float, **changes: Any) -> TaskRecord:
    """A copy of `record` in `status` with `changes` applied; raises `InvalidTransition` if not allowed.

    A same-status "transition" of a live task (e.g. storing answers while `input_required`) is allowed.
    """
    if record.terminal:
        raise InvalidTransition(f"task {record.task_id} is already {record.status}")
    if status != record.status and status not in ALLOWED[record.status]:
        raise InvalidTransition(f"task {record.task_id}: {record.status} -> {status} is not allowed")
    return record.replace(status=status, updated_at=now, **changes)
