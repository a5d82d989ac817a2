"""Persistence records: the state the kit keeps between requests, separate from wire types."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


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
