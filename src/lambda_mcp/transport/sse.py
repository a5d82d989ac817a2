"""Server-sent-event framing: bytes for one event, a priming event, a `retry:` field, and keep-alive
comments (their interval: `LAMBDA_MCP_KEEP_ALIVE_SECONDS`)."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from typing import Any

from ..env_reader import _Reader

KEEP_ALIVE = b": keep-alive\n\n"
"""A comment line: clients ignore it, and it keeps idle timeouts on the way (API Gateway REST STREAM:
5 min regional, 30 s edge-optimized) from closing a quiet stream."""
KEEP_ALIVE_SECONDS = 15.0


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


def keep_alive_seconds(environ: Mapping[str, str] | None = None) -> float:
    """Seconds between keep-alive comments on a quiet stream: `LAMBDA_MCP_KEEP_ALIVE_SECONDS` (default 15,
    under every idle timeout on the way); `ConfigError` for a value that is not a number of at least 1."""
    return _Reader(os.environ if environ is None else environ).number(
        "KEEP_ALIVE_SECONDS", KEEP_ALIVE_SECONDS, minimum=1
    )


def retry_only(retry_ms: int) -> bytes:
    """A `retry:` field with no event: the client reconnects after `retry_ms` when the stream ends."""
    return f"retry: {retry_ms}\n\n".encode()
