"""Persistence records: the state the kit keeps between requests, separate from wire types (a task's,
`TaskRecord` and `StepRecord`, in storage/task_records.py, and importable from here)."""

from __future__ import annotations

from typing import Any

from ..protocol.values import Struct, Value, set_field
from .task_records import TERMINAL, StepRecord, TaskRecord, TaskStatus, listed

__all__ = [
    "TERMINAL",
    "CallRecord",
    "Change",
    "SessionRecord",
    "StepRecord",
    "StoredEvent",
    "TaskRecord",
    "TaskStatus",
    "listed",
]


class SessionRecord(Struct):
    """A legacy-era session, created by `initialize` and ended by DELETE or expiry."""

    __slots__ = (
        "session_id",
        "protocol_version",
        "client_capabilities",
        "client_info",
        "created_at",
        "expires_at",
        "principal",
        "log_level",
        "subscriptions",
        "touched_at",
    )
    session_id: str
    protocol_version: str
    client_capabilities: dict[str, Any]
    client_info: dict[str, Any]
    created_at: float
    expires_at: float
    principal: str | None
    log_level: str | None
    subscriptions: set[str]
    touched_at: float

    def __init__(
        self,
        session_id: str,
        protocol_version: str,
        client_capabilities: dict[str, Any],
        client_info: dict[str, Any],
        created_at: float,
        expires_at: float,
        principal: str | None = None,
        log_level: str | None = None,
        subscriptions: set[str] | None = None,
        touched_at: float = 0.0,
    ) -> None:
        self.session_id = session_id
        self.protocol_version = protocol_version
        self.client_capabilities = client_capabilities
        self.client_info = client_info
        self.created_at = created_at
        self.expires_at = expires_at
        self.principal = principal
        self.log_level = log_level
        self.subscriptions = set() if subscriptions is None else subscriptions
        self.touched_at = touched_at


class StoredEvent(Value):
    """One SSE event of a session stream: `event_id` encodes the stream, `message` is JSON-RPC."""

    __slots__ = ("stream_id", "seq", "event_id", "message")
    stream_id: str
    seq: int
    event_id: str
    message: dict[str, Any] | None

    def __init__(self, stream_id: str, seq: int, event_id: str, message: dict[str, Any] | None) -> None:
        set_field(self, "stream_id", stream_id)
        set_field(self, "seq", seq)
        set_field(self, "event_id", event_id)
        set_field(self, "message", message)


class CallRecord(Struct):
    """A legacy call suspended on a buffered transport, keyed by session and the call's stream. Without a
    `nonce` it is only a marker: a call that runs (or waits) somewhere, or a request that created a task,
    so that a `notifications/cancelled` naming its request id finds it.

    The instance that runs the call writes `request`, `delivered`, `checkpoints` and `response`;
    the client's answers (`answers`, by input key) and `cancelled_at` arrive from any instance.
    """

    __slots__ = (
        "session_id",
        "stream_id",
        "nonce",
        "request",
        "created_at",
        "expires_at",
        "delivered",
        "checkpoints",
        "awaiting",
        "answers",
        "response",
        "cancelled_at",
        "version",
        "task_id",
    )
    session_id: str
    stream_id: str
    nonce: str
    """Random per call: part of every server-to-client request id, so ids are unguessable."""
    request: dict[str, Any]
    """The client's JSON-RPC request, verbatim: a resumption re-runs it from the top."""
    created_at: float
    expires_at: float
    delivered: int
    """Outgoing messages (notifications and requests) already sent to the client, in run order."""
    checkpoints: int
    """Stream closes (`ctx.close_sse_stream()`) already passed."""
    awaiting: list[str]
    """Input keys the last run asked for and had no answer to."""
    answers: dict[str, dict[str, Any]]
    """The client's JSON-RPC responses, by input key."""
    response: dict[str, Any] | None
    """The final response once the call ended (a late resumption is answered with it again)."""
    cancelled_at: float
    version: int
    task_id: str | None
    """Set on the marker of a request that created a legacy task: a cancel of the request cancels it."""

    def __init__(
        self,
        session_id: str,
        stream_id: str,
        nonce: str,
        request: dict[str, Any],
        created_at: float,
        expires_at: float,
        delivered: int = 0,
        checkpoints: int = 0,
        awaiting: list[str] | None = None,
        answers: dict[str, dict[str, Any]] | None = None,
        response: dict[str, Any] | None = None,
        cancelled_at: float = 0.0,
        version: int = 0,
        task_id: str | None = None,
    ) -> None:
        self.session_id = session_id
        self.stream_id = stream_id
        self.nonce = nonce
        self.request = request
        self.created_at = created_at
        self.expires_at = expires_at
        self.delivered = delivered
        self.checkpoints = checkpoints
        self.awaiting = [] if awaiting is None else awaiting
        self.answers = {} if answers is None else answers
        self.response = response
        self.cancelled_at = cancelled_at
        self.version = version
        self.task_id = task_id

    @property
    def cancelled(self) -> bool:
        """Whether `notifications/cancelled` arrived for this call (not for an earlier one with the same id)."""
        return self.cancelled_at >= self.created_at > 0


class Change(Value):
    """One entry of the change feed: `kind` is `tools`, `prompts`, `resources` (a list changed) or
    `resource` (the resource at `uri` was updated). `cursor` orders entries and resumes reading."""

    __slots__ = ("cursor", "kind", "uri", "principal")
    cursor: str
    kind: str
    uri: str | None
    principal: str | None
    """Only listeners of this principal hear of it (None: every listener)."""

    def __init__(self, cursor: str, kind: str, uri: str | None = None, principal: str | None = None) -> None:
        set_field(self, "cursor", cursor)
        set_field(self, "kind", kind)
        set_field(self, "uri", uri)
        set_field(self, "principal", principal)
