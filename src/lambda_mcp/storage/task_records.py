"""A task's records: the task (`TaskRecord`) and the checkpoints of its runs (`StepRecord`)."""

from __future__ import annotations

import logging
from typing import Any, Literal

from ..protocol.values import Struct, Value, set_field

logger = logging.getLogger("lambda_mcp")


class StepRecord(Value):
    """A checkpoint of a task's runs (`ctx.step`, `ctx.sleep`), kept in an item of its own beside the task:
    `done` with its JSON `result`, or only started (its function runs, or its run stopped while it ran).
    `run` names the run that wrote it, so a write whose answer was lost recognises itself."""

    __slots__ = ("name", "done", "result", "run")
    name: str
    done: bool
    result: Any
    run: str

    def __init__(self, name: str, done: bool, result: Any = None, run: str = "") -> None:
        set_field(self, "name", name)
        set_field(self, "done", done)
        set_field(self, "result", result)
        set_field(self, "run", run)


TaskStatus = Literal["working", "input_required", "completed", "failed", "cancelled"]
TERMINAL: frozenset[str] = frozenset({"completed", "failed", "cancelled"})


class TaskRecord(Struct):
    """A task as stored: what it runs, who owns it, its status and result, and its TTL."""

    __slots__ = (
        "task_id",
        "owner",
        "method",
        "params",
        "created_at",
        "expires_at",
        "ttl_ms",
        "poll_interval_ms",
        "wire",
        "status",
        "status_message",
        "updated_at",
        "result",
        "error",
        "input_requests",
        "input_responses",
        "cancel_requested",
        "progress_token",
        "session_id",
        "request_id",
        "log_level",
        "protocol_version",
        "scopes",
        "claims",
        "client_capabilities",
        "lease_owner",
        "lease_expires_at",
        "attempts",
        "due_at",
        "wake_at",
        "execution_arn",
        "callback_id",
        "version",
    )
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
    wire: Literal["legacy", "modern"]
    status: TaskStatus
    status_message: str | None
    updated_at: float
    result: dict[str, Any] | None
    error: dict[str, Any] | None
    """The JSON-RPC error object, verbatim, for `failed`."""
    input_requests: dict[str, dict[str, Any]]
    """Outstanding requests to the client, by key (keys are unique over the task's life)."""
    input_responses: dict[str, Any]
    """Every answer received so far, by key; the worker replays them in order on re-runs."""
    cancel_requested: bool
    progress_token: str | int | None
    session_id: str | None
    request_id: str | int | None
    """The id of the request that created it (legacy `notifications/cancelled` names it)."""
    log_level: str | None
    """The legacy session's log level when the task was created (None: the run sends no logs)."""
    protocol_version: str | None
    scopes: list[str] | None
    """The OAuth scopes the creating request's token granted (None: auth `none`); the run sees them."""
    claims: dict[str, Any]
    """The creating request's token claims (empty: auth `none`, or a record written before they were kept);
    the run sees them as `ctx.claims`. Not in task lists."""
    client_capabilities: dict[str, Any]
    lease_owner: str | None
    lease_expires_at: float
    attempts: int
    """Runs started by workers (claims); the sweeper gives up after the configured maximum."""
    due_at: float
    """When the sweeper should look at a `working` task: its lease's end, (unclaimed) when its queue
    message should have been picked up, or (asleep) when it wakes. Stores index it only while `working`."""
    wake_at: float
    """While a task sleeps (`ctx.sleep`, between its runs): when it runs again (0: not asleep)."""
    execution_arn: str | None
    """The durable backend: the ARN of the task's durable execution (written by its first run)."""
    callback_id: str | None
    """The durable backend, while `input_required`: the id of the callback that resumes the execution. A
    secret (whoever holds it may complete the callback): never in a client's answer or a log line."""
    version: int
    """Bumped by every write; each write is conditioned on the version it read."""

    def __init__(
        self,
        task_id: str,
        owner: str,
        method: str,
        params: dict[str, Any],
        created_at: float,
        expires_at: float,
        ttl_ms: int | None,
        poll_interval_ms: int,
        wire: Literal["legacy", "modern"] = "modern",
        status: TaskStatus = "working",
        status_message: str | None = None,
        updated_at: float = 0.0,
        result: dict[str, Any] | None = None,
        error: dict[str, Any] | None = None,
        input_requests: dict[str, dict[str, Any]] | None = None,
        input_responses: dict[str, Any] | None = None,
        cancel_requested: bool = False,
        progress_token: str | int | None = None,
        session_id: str | None = None,
        request_id: str | int | None = None,
        log_level: str | None = None,
        protocol_version: str | None = None,
        scopes: list[str] | None = None,
        claims: dict[str, Any] | None = None,
        client_capabilities: dict[str, Any] | None = None,
        lease_owner: str | None = None,
        lease_expires_at: float = 0.0,
        attempts: int = 0,
        due_at: float = 0.0,
        wake_at: float = 0.0,
        execution_arn: str | None = None,
        callback_id: str | None = None,
        version: int = 0,
    ) -> None:
        self.task_id = task_id
        self.owner = owner
        self.method = method
        self.params = params
        self.created_at = created_at
        self.expires_at = expires_at
        self.ttl_ms = ttl_ms
        self.poll_interval_ms = poll_interval_ms
        self.wire = wire
        self.status = status
        self.status_message = status_message
        self.updated_at = updated_at
        self.result = result
        self.error = error
        self.input_requests = {} if input_requests is None else input_requests
        self.input_responses = {} if input_responses is None else input_responses
        self.cancel_requested = cancel_requested
        self.progress_token = progress_token
        self.session_id = session_id
        self.request_id = request_id
        self.log_level = log_level
        self.protocol_version = protocol_version
        self.scopes = scopes
        self.claims = {} if claims is None else claims
        self.client_capabilities = {} if client_capabilities is None else client_capabilities
        self.lease_owner = lease_owner
        self.lease_expires_at = lease_expires_at
        self.attempts = attempts
        self.due_at = due_at
        self.wake_at = wake_at
        self.execution_arn = execution_arn
        self.callback_id = callback_id
        self.version = version

    @classmethod
    def from_stored(cls, stored: dict[str, Any]) -> TaskRecord:
        """A record from its stored JSON. A field this release does not know (written by a later one, then
        rolled back) is dropped with a warning, never a crash: one unreadable item would otherwise stop
        every sweep and every read of it. A required field that is missing still raises `TypeError`."""
        unknown = stored.keys() - _TASK_FIELDS
        if not unknown:
            return cls(**stored)
        if not unknown <= _warned:  # once per process and field: a rolled-back table has many such items
            _warned.update(unknown)
            logger.warning(
                "task %s: ignoring stored fields this release does not know: %s",
                stored.get("task_id"),
                ", ".join(sorted(unknown)),
            )
        return cls(**{k: v for k, v in stored.items() if k in _TASK_FIELDS})

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


_TASK_FIELDS = frozenset(TaskRecord._fields)
_warned: set[str] = set()
"""Unknown stored fields already warned about in this process."""

_NOT_LISTED: dict[str, Any] = {
    "params": {},
    "result": None,
    "error": None,
    "input_requests": {},
    "input_responses": {},
    "client_capabilities": {},
    "claims": {},
}


def listed(record: TaskRecord) -> TaskRecord:
    """What a task list carries of a task: all but its request, result, error, inputs (up to hundreds of
    KB each) and its creator's claims, which stores keep out of their owner index."""
    return record.replace(**_NOT_LISTED)
