"""The change feed: list and resource changes, fanned out to listeners in this process and written to
the durable change log of the kit serving the current request (or task run), for listeners on other
instances.

Listeners in this process are the legacy GET streams and 2026 `subscriptions/listen` streams of a
streaming server; a buffered deployment's listeners poll the change log instead. The kit names the
durable log for the duration of a request (`publishing_to`), so an app object is never tied to one
kit: two kits may serve one app.
"""

from __future__ import annotations

import asyncio
import time
from contextvars import ContextVar
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from ..storage.ports import ChangeLog

_durable: ContextVar[ChangeLog | None] = ContextVar("lambda_mcp_change_log", default=None)


class Published(NamedTuple):
    """One change: `kind` is `tools`, `prompts`, `resources` (a list changed), `resource` (`uri` was
    updated) or `elicitation` (the URL elicitation whose id is `uri` finished: 2025-11-25 sessions hear of
    it); `principal` limits who hears of it (None: every listener)."""

    kind: str
    uri: str | None
    principal: str | None = None


class publishing_to:  # noqa: N801  (used as a function: `with publishing_to(log):`)
    """Changes published in this context (and in tasks it starts) also go to `log`. A plain class rather
    than `@contextmanager`: it wraps every request, and costs a third of a generator-based one."""

    __slots__ = ("_log", "_token")

    def __init__(self, log: ChangeLog) -> None:
        self._log = log

    def __enter__(self) -> None:
        self._token = _durable.set(self._log)

    def __exit__(self, *exc: object) -> None:
        _durable.reset(self._token)


class ChangeFeed:
    def __init__(self) -> None:
        self._queues: set[asyncio.Queue[Published]] = set()

    def listen(self) -> asyncio.Queue[Published]:
        queue: asyncio.Queue[Published] = asyncio.Queue()
        self._queues.add(queue)
        return queue

    def close(self, queue: asyncio.Queue[Published]) -> None:
        self._queues.discard(queue)

    async def publish(self, kind: str, uri: str | None, principal: str | None = None) -> None:
        """`kind` is `tools`, `prompts`, `resources` (list changed) or `resource` (one `uri` updated)."""
        change = Published(kind, uri, principal)
        for queue in list(self._queues):
            queue.put_nowait(change)
        log = _durable.get()
        if log is not None:
            await log.publish(kind, uri, time.time(), principal)
