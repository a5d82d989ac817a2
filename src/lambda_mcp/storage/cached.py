"""`CachedSessions`: a session store that remembers the records it read for a second or so.

Every legacy request reads its session (one GetItem). A long-lived process serving many requests on
the same sessions (the streaming server) can reuse a record it read moments ago: `CachedSessions`
wraps any `SessionStore`, answers `get` from memory while the record is younger than `seconds` and
still unexpired, and forgets a session whenever this process changes it (touch, log level,
subscription, termination), so its own writes are seen at once. A change made by another process
(a DELETE served elsewhere) is seen here within `seconds`: the price of the saved reads, and the
reason the buffered Lambda transport, whose consecutive requests land on different instances, does
not use it.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable

from .ports import SessionStore
from .records import SessionRecord


class CachedSessions:
    """A `SessionStore` in front of another, with reads kept for `seconds` (at most `size` sessions)."""

    def __init__(
        self,
        store: SessionStore,
        seconds: float,
        *,
        size: int = 10_000,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.store = store
        self.seconds = seconds
        self.size = size
        self.clock = clock
        self._read: OrderedDict[str, tuple[float, SessionRecord]] = OrderedDict()

    async def create(self, record: SessionRecord) -> None:
        self._read.pop(record.session_id, None)
        await self.store.create(record)

    async def get(self, session_id: str, now: float) -> SessionRecord | None:
        kept = self._read.get(session_id)
        if kept is not None:
            read_at, record = kept
            if self.clock() - read_at < self.seconds and record.expires_at > now:
                return _copy(record)
            del self._read[session_id]
        found = await self.store.get(session_id, now)
        if found is not None:
            self._read[session_id] = (self.clock(), found)
            if len(self._read) > self.size:
                self._read.popitem(last=False)  # the oldest read
            return _copy(found)
        return None

    async def touch(self, session_id: str, now: float, expires_at: float) -> None:
        self._read.pop(session_id, None)
        await self.store.touch(session_id, now, expires_at)

    async def set_log_level(self, session_id: str, level: str) -> None:
        self._read.pop(session_id, None)
        await self.store.set_log_level(session_id, level)

    async def subscribe(self, session_id: str, uri: str, subscribed: bool, *, limit: int | None = None) -> None:
        self._read.pop(session_id, None)
        await self.store.subscribe(session_id, uri, subscribed, limit=limit)

    async def terminate(self, session_id: str) -> None:
        self._read.pop(session_id, None)
        await self.store.terminate(session_id)


def _copy(record: SessionRecord) -> SessionRecord:
    """A record of its own for each request (a batch may change its copy's log level)."""
    return record.replace(subscriptions=set(record.subscriptions))
