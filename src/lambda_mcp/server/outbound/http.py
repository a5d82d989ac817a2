"""The process-wide HTTP client that tools' outgoing calls share (OpenAPI operations, mounted servers),
and the time a call may take: what is left of the request's deadline, at most `DEFAULT_TIMEOUT`.

One `httpx.AsyncClient` per event loop (a Lambda process runs one loop for its life; the test client may
run several, one after another), so connections are pooled across invocations and never shared
between loops. httpx is imported only when a first outgoing call is made.
"""

from __future__ import annotations

import asyncio
import time
import weakref
from typing import TYPE_CHECKING

from ..errors import ToolError

if TYPE_CHECKING:
    import httpx

    from ..context import Context

DEFAULT_TIMEOUT = 30.0
MARGIN = 0.5
"""Seconds kept back before the deadline so that the call's failure can still be answered."""

_clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, httpx.AsyncClient] = weakref.WeakKeyDictionary()


def client() -> httpx.AsyncClient:
    """The running loop's client (made on first use): no redirects followed, pooled connections."""
    import httpx

    loop = asyncio.get_running_loop()
    found = _clients.get(loop)
    if found is None or found.is_closed:
        limits = httpx.Limits(max_connections=100, max_keepalive_connections=20, keepalive_expiry=30.0)
        found = _clients[loop] = httpx.AsyncClient(follow_redirects=False, limits=limits, timeout=DEFAULT_TIMEOUT)
    return found


def forget_clients() -> None:
    """Drop every loop's client, so that the next call makes a new one with a pool of its own: after a SnapStart
    restore (entrypoints/_snapstart.py), whose pooled connections were the snapshot's. Not closed: a polite close
    over a connection that did not survive the restore could wait for its timeout; their sockets go with them."""
    _clients.clear()


def seconds_left(ctx: Context | None, ceiling: float = DEFAULT_TIMEOUT) -> float:
    """How long an outgoing call may take: up to `ceiling`, less when the request's deadline is nearer;
    `ToolError` when no time is left."""
    deadline = ctx.deadline if ctx is not None else None
    if deadline is None:
        return ceiling
    left = deadline - time.time() - MARGIN
    if left <= 0:
        raise ToolError("no time is left in this request for the call")
    return min(ceiling, left)
