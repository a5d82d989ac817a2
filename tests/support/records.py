"""Records the storage tests build: a session as `initialize` would store it."""

from __future__ import annotations

from lambda_mcp.storage.records import SessionRecord


def session_record(session_id: str = "s1", expires_at: float = 10_000.0, **fields: object) -> SessionRecord:
    """A 2025-11-25 session with a client's info, created at 0 and live until `expires_at`."""
    record = SessionRecord(session_id, "2025-11-25", {}, {"name": "c", "version": "1"}, 0.0, expires_at)
    for name, value in fields.items():
        setattr(record, name, value)
    return record
