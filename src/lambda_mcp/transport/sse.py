"""Server-sent-event framing: bytes for one event, a priming event, and a `retry:` field."""

from __future__ import annotations

import json
from typing import Any


def event(message: dict[str, Any] | None, event_id: str | None = None, retry_ms: int | None = None) -> bytes:
    lines: list[str] = []
    if event_id is not None:
        lines.append(f"id: {event_id}")
    if retry_ms is not None:
        lines.append(f"retry: {retry_ms}")
    if message is None:
        lines.append("data: ")
    else:
        lines.append("event: message")
        lines.append("data: " + json.dumps(message, separators=(",", ":")))
    return ("\n".join(lines) + "\n\n").encode()


def body(messages: list[dict[str, Any]], response: dict[str, Any] | None = None) -> bytes:
    """Events for `messages` (no ids), then the response if there is one: a finished buffered stream."""
    return b"".join(event(m) for m in messages) + (event(response) if response is not None else b"")


HEADERS = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
MEDIA_TYPE = "text/event-stream"
