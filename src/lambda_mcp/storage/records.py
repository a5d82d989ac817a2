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
