"""The endpoint's HTTP replies: a JSON-RPC message as JSON, a JSON-RPC error with its HTTP status, and a
buffered SSE body."""

from __future__ import annotations

import json
from typing import Any

from starlette.responses import Response

from ..observe.invocation import note
from ..protocol import jsonrpc
from ..protocol.errors import INTERNAL_ERROR, INVALID_REQUEST, UNAVAILABLE
from . import sse

_COMPACT = json.JSONEncoder(separators=(",", ":"))
"""`json.dumps(..., separators=...)` builds an encoder per call: one, built once."""


class JsonReply(Response):
    """A JSON response with its raw headers built directly (every answer is one: Starlette's generic
    header handling is a few µs of a ~50 µs request)."""

    media_type = "application/json"

    def __init__(self, body: bytes, status: int, headers: dict[str, str] | None) -> None:
        self.body = body
        self.status_code = status
        self.background = None
        raw = [(b"content-length", str(len(body)).encode()), (b"content-type", b"application/json")]
        if headers:
            raw += [(key.lower().encode("latin-1"), value.encode("latin-1")) for key, value in headers.items()]
        self.raw_headers = raw


def json_reply(message: dict[str, Any] | None, status: int = 200, headers: dict[str, str] | None = None) -> Response:
    body = b"" if message is None else _COMPACT.encode(message).encode()
    if status == 503:  # every 503 says when to retry
        headers = {"Retry-After": str(RETRY_AFTER_SECONDS), **(headers or {})}
    return JsonReply(body, status, headers)


def error_reply(status: int, code: int, message: str, rid: Any = None, data: Any = None) -> Response:
    note(jsonrpc_error=code)
    error: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return json_reply(jsonrpc.error_message(rid, error), status)


def unknown_event_id() -> Response:
    """404 for a `Last-Event-ID` this session never saw (or that expired)."""
    return error_reply(404, INVALID_REQUEST, "Unknown Last-Event-ID for this session")


RETRY_AFTER_SECONDS = 1


def unavailable(rid: Any = None) -> Response:
    """503 with `Retry-After`: storage failed after its own retries; nothing was lost, the request may be repeated."""
    return error_reply(503, INTERNAL_ERROR, UNAVAILABLE, rid)


def sse_reply(body: bytes, status: int = 200, headers: dict[str, str] | None = None) -> Response:
    """A finished SSE body (a buffered response: every event at once)."""
    return Response(body, status_code=status, media_type=sse.MEDIA_TYPE, headers={**sse.HEADERS, **(headers or {})})
