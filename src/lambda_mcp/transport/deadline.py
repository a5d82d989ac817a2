"""How long a response may take to end: the time a wait may use, and what a wait that ran out says.

A buffered transport's response must end before the Lambda invocation does (API Gateway delivers it
only then), so a wait (a legacy `tasks/result`, a hold) ends `SAFETY_SECONDS` before the invocation's
remaining time runs out, or after `max_wait_seconds`, whichever comes first. A streaming server's
waits have no invocation: only `max_wait_seconds` bounds them. Behind the Lambda Web Adapter
(`lambda-mcp serve`) a streaming response has one: it ends `SAFETY_SECONDS` before the invocation
does (`stream_deadline`), whatever it was waiting for.
"""

from __future__ import annotations

import time
from typing import Any

from starlette.types import Scope

from ..protocol.errors import INTERNAL_ERROR

SAFETY_SECONDS = 2.0
"""Time kept back from the invocation's remaining time to write the response."""


def deadline(scope: Scope, max_wait_seconds: float) -> float:
    """When a wait must hand back: `max_wait_seconds` from now, or sooner if the Lambda context (Mangum
    puts it in the ASGI scope as `aws.context`) says the invocation ends sooner."""
    wait = max_wait_seconds
    remaining = getattr(scope.get("aws.context"), "get_remaining_time_in_millis", None)
    if callable(remaining):
        wait = min(wait, remaining() / 1000 - SAFETY_SECONDS)
    return time.time() + max(0.0, wait)


def stream_deadline(scope: Scope) -> float | None:
    """When a streaming response must end (an epoch time), None when nothing bounds it (`lambda-mcp dev`):
    `SAFETY_SECONDS` before the end of the Lambda invocation that carries it (`lambda-mcp serve` behind
    the Lambda Web Adapter puts its clock in the scope as `aws.context`)."""
    remaining = getattr(scope.get("aws.context"), "get_remaining_time_in_millis", None)
    if not callable(remaining):
        return None
    left: float = remaining() / 1000
    return time.time() + max(0.0, left - SAFETY_SECONDS)


def quiet_seconds(every: float, until: float | None) -> float:
    """How long a stream may wait for something to send: `every` (its keep-alive interval), or until the
    epoch time `until` if that comes first (None: no end)."""
    return every if until is None else max(0.0, min(every, until - time.time()))


def still_running() -> dict[str, Any]:
    """The error for a wait that had to end where the client cannot resume it (no SSE)."""
    return {
        "code": INTERNAL_ERROR,
        "message": "The task is still running: call tasks/result again (accept text/event-stream to wait"
        " across responses) or poll tasks/get",
    }
