"""The task record and its state machine, as pure data: which status may follow which, and what changes with it.

`working -> input_required | completed | failed | cancelled`, `input_required -> working |
completed | failed | cancelled`; `completed`, `failed` and `cancelled` are final. Stores enforce the
same rule with conditional writes (a write is conditioned on the version read and on the stored
status not being final), so a cancel and a completion racing each other end in exactly one.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Literal

TaskStatus = Literal["working", "input_required", "completed", "failed", "cancelled"]
TERMINAL: frozenset[str] = frozenset({"completed", "failed", "cancelled"})
ALLOWED: dict[str, frozenset[str]] = {
    "working": frozenset({"input_required", "completed", "failed", "cancelled"}),
    "input_required": frozenset({"working", "completed", "failed", "cancelled"}),
}


class InvalidTransition(Exception):
    """A status change the state machine does not allow (for example anything after a final status)."""


@dataclass
class TaskRecord:
    task_id: str
    owner: str
    """Who may see it: `principal:<principal>` when authenticated, else `session:<id>`, else `anonymous`
    (then the unguessable task id is the only handle)."""
    method: str
    params: dict[str, Any]
    created_at: float
    expires_at: float
    ttl_ms: int | None
    poll_interval_ms: int
    wire: Literal["legacy", "modern"] = "modern"
    status: TaskStatus = "working"
    status_message: str | None = None
    updated_at: float = 0.0
    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None
    """The JSON-RPC error object, verbatim, for `failed`."""
    input_requests: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Outstanding requests to the client, by key (keys are unique over the task's life)."""
    input_responses: dict[str, Any] = field(default_factory=dict)
    """Every answer received so far, by key; the worker replays them in order on re-runs."""
    cancel_requested: bool = False
    progress_token: str | int | None = None
    session_id: str | None = None
    request_id: str | int | None = None
    """The id of the request that created it (legacy `notifications/cancelled` names it)."""
    log_level: str | None = None
    """The legacy session's log level when the task was created (None: the run sends no logs)."""
    protocol_version: str | None = None
    scopes: list[str] | None = None
    """The OAuth scopes the creating request's token granted (None: auth `none`); the run sees them."""
    client_capabilities: dict[str, Any] = field(default_factory=dict)
    lease_owner: str | None = None
    lease_expires_at: float = 0.0
    attempts: int = 0
    """Runs started by workers (claims); the sweeper gives up after the configured maximum."""
    due_at: float = 0.0
    """When the sweeper should look at a `working` task: its lease's end, or (unclaimed) when its
    queue message should have been picked up. Stores index it only while the task is `working`."""
    version: int = 0
    """Bumped by every write; each write is conditioned on the version it read."""

    @property
    def terminal(self) -> bool:
        return self.status in TERMINAL

    def live(self, now: float) -> bool:
        return self.expires_at > now

    def leased(self, now: float) -> bool:
        """Whether a worker's claim on it is still running (no other worker may run it meanwhile)."""
        return self.lease_owner is not None and self.lease_expires_at > now

    @property
    def sweepable(self) -> bool:
        """Whether stores keep it in the due index (only `working` tasks can have a stalled worker)."""
        return self.status == "working" and self.due_at > 0


_NOT_LISTED: dict[str, Any] = {
    "params": {},
    "result": None,
    "error": None,
    "input_requests": {},
    "input_responses": {},
    "client_capabilities": {},
}


def listed(record: TaskRecord) -> TaskRecord:
    """What a task list carries of a task: all but its request, result, error and inputs (up to hundreds
    of KB each), which stores keep out of their owner index."""
    return dataclasses.replace(record, **_NOT_LISTED)


def transition(record: TaskRecord, status: TaskStatus, now: float, **changes: Any) -> TaskRecord:
    """A copy of `record` in `status` with `changes` applied; raises `InvalidTransition` if not allowed.

    A same-status "transition" of a live task (e.g. storing answers while `input_required`) is allowed.
    """
    if record.terminal:
        raise InvalidTransition(f"task {record.task_id} is already {record.status}")
    if status != record.status and status not in ALLOWED[record.status]:
        raise InvalidTransition(f"task {record.task_id}: {record.status} -> {status} is not allowed")
    return dataclasses.replace(record, status=status, updated_at=now, **changes)
