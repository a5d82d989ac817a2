"""Persistence records: the state the kit keeps between requests, separate from wire types."""

from __future__ import annotations

import dataclasses
import logging
from dataclasses import dataclass, field
from typing import Any, Literal

logger = logging.getLogger("lambda_mcp")


@dataclass
class SessionRecord:
    """A legacy-era session, created by `initialize` and ended by DELETE or expiry."""

    session_id: str
    protocol_version: str
    client_capabilities: dict[str, Any]
    client_info: dict[str, Any]
    created_at: float
    expires_at: float
    principal: str | None = None
    log_level: str | None = None
    subscriptions: set[str] = field(default_factory=set)
    touched_at: float = 0.0


@dataclass(frozen=True)
class StoredEvent:
    """One SSE event of a session stream: `event_id` encodes the stream, `message` is JSON-RPC."""

    stream_id: str
    seq: int
    event_id: str
    message: dict[str, Any] | None


@dataclass
class CallRecord:
    """A legacy call suspended on a buffered transport, keyed by session and the call's stream. Without a
    `nonce` it is only a marker: a call that runs (or waits) somewhere, or a request that created a task,
    so that a `notifications/cancelled` naming its request id finds it.

    The instance that runs the call writes `request`, `delivered`, `checkpoints` and `response`;
    the client's answers (`answers`, by input key) and `cancelled_at` arrive from any instance.
    """

    session_id: str
    stream_id: str
    nonce: str
    """Random per call: part of every server-to-client request id, so ids are unguessable."""
    request: dict[str, Any]
    """The client's JSON-RPC request, verbatim: a resumption re-runs it from the top."""
    created_at: float
    expires_at: float
    delivered: int = 0
    """Outgoing messages (notifications and requests) already sent to the client, in run order."""
    checkpoints: int = 0
    """Stream closes (`ctx.close_sse_stream()`) already passed."""
    awaiting: list[str] = field(default_factory=list)
    """Input keys the last run asked for and had no answer to."""
    answers: dict[str, dict[str, Any]] = field(default_factory=dict)
    """The client's JSON-RPC responses, by input key."""
    response: dict[str, Any] | None = None
    """The final response once the call ended (a late resumption is answered with it again)."""
    cancelled_at: float = 0.0
    version: int = 0
    task_id: str | None = None
    """Set on the marker of a request that created a legacy task: a cancel of the request cancels it."""

    @property
    def cancelled(self) -> bool:
        """Whether `notifications/cancelled` arrived for this call (not for an earlier one with the same id)."""
        return self.cancelled_at >= self.created_at > 0


@dataclass(frozen=True)
class Change:
    """One entry of the change feed: `kind` is `tools`, `prompts`, `resources` (a list changed) or
    `resource` (the resource at `uri` was updated). `cursor` orders entries and resumes reading."""

    cursor: str
    kind: str
    uri: str | None = None
    principal: str | None = None
    """Only listeners of this principal hear of it (None: every listener)."""


@dataclass(frozen=True)
class StepRecord:
    """A checkpoint of a task's runs (`ctx.step`, `ctx.sleep`), kept in an item of its own beside the task:
    `done` with its JSON `result`, or only started (its function runs, or its run stopped while it ran).
    `run` names the run that wrote it, so a write whose answer was lost recognises itself."""

    name: str
    done: bool
    result: Any = None
    run: str = ""


TaskStatus = Literal["working", "input_required", "completed", "failed", "cancelled"]
TERMINAL: frozenset[str] = frozenset({"completed", "failed", "cancelled"})


@dataclass
class TaskRecord:
    """A task as stored: what it runs, who owns it, its status and result, and its TTL."""

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
    claims: dict[str, Any] = field(default_factory=dict)
    """The creating request's token claims (empty: auth `none`, or a record written before they were kept);
    the run sees them as `ctx.claims`. Not in task lists."""
    client_capabilities: dict[str, Any] = field(default_factory=dict)
    lease_owner: str | None = None
    lease_expires_at: float = 0.0
    attempts: int = 0
    """Runs started by workers (claims); the sweeper gives up after the configured maximum."""
    due_at: float = 0.0
    """When the sweeper should look at a `working` task: its lease's end, (unclaimed) when its queue
    message should have been picked up, or (asleep) when it wakes. Stores index it only while `working`."""
    wake_at: float = 0.0
    """While a task sleeps (`ctx.sleep`, between its runs): when it runs again (0: not asleep)."""
    execution_arn: str | None = None
    """The durable backend: the ARN of the task's durable execution (written by its first run)."""
    callback_id: str | None = None
    """The durable backend, while `input_required`: the id of the callback that resumes the execution. A
    secret (whoever holds it may complete the callback): never in a client's answer or a log line."""
    version: int = 0
    """Bumped by every write; each write is conditioned on the version it read."""

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


_TASK_FIELDS = frozenset(f.name for f in dataclasses.fields(TaskRecord))
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
    return dataclasses.replace(record, **_NOT_LISTED)
