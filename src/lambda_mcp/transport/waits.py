"""Resumable waits on a buffered transport: which calls may wait, their event-log stream, their deadline.

A legacy `tasks/result` blocks until its task is final. In Lambda the wait must end before the
invocation does, so the response ends early with a priming event id; the id's stream encodes the
task and the request id, so a `GET` with `Last-Event-ID` on any instance can rebuild the same
request and wait again.
"""

from __future__ import annotations

import time
from typing import Any

from ..dispatch.scope import RequestScope
from ..protocol import b64url
from ..protocol.jsonrpc import Message

PREFIX = "taskresult~"
SAFETY_SECONDS = 2.0
"""Time kept back from the invocation's remaining time to write the response."""


def resumable(message: Message, scope: RequestScope) -> bool:
    return (
        message.method == "tasks/result"
        and scope.era == "legacy"
        and scope.session is not None
        and isinstance((message.params or {}).get("taskId"), str)
    )


def stream_for(message: Message) -> str:
    """`taskresult~<task id>~<request id as base64url JSON>`: no `.` (event ids use it as separator)."""
    task_id = str((message.params or {})["taskId"])
    return f"{PREFIX}{task_id}~{b64url.encode_request_id(message.id)}"


def message_for(event_id: str) -> Message | None:
    """The `tasks/result` request a wait's event id belongs to; None for any other stream."""
    stream = event_id.split(".", 1)[0]
    if not stream.startswith(PREFIX):
        return None
    task_id, _, encoded = stream[len(PREFIX) :].partition("~")
    rid = b64url.decode_request_id(encoded)
    if not task_id or rid is None:
        return None
    params = {"taskId": task_id}
    raw = {"jsonrpc": "2.0", "id": rid, "method": "tasks/result", "params": params}
    return Message("request", raw, rid, "tasks/result", params)


def deadline(context: Any, max_wait_seconds: float) -> float:
    """When a wait must hand back: `max_wait_seconds` from now, or sooner if the Lambda context says so."""
    wait = max_wait_seconds
    remaining = getattr(context, "get_remaining_time_in_millis", None)
    if callable(remaining):
        wait = min(wait, remaining() / 1000 - SAFETY_SECONDS)
    return time.time() + max(0.0, wait)


def still_running() -> dict[str, Any]:
    """The error for a wait that had to end where the client cannot resume it (no SSE)."""
    return {
        "code": -32603,
        "message": "The task is still running: call tasks/result again (accept text/event-stream to wait"
        " across responses) or poll tasks/get",
    }
