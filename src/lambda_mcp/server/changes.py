"""The change feed: list and resource changes, fanned out to listeners in this process and written to
the durable change log (when the kit gave the feed one) for listeners on other instances.

Listeners in this process are the legacy GET streams and 2026 `subscriptions/listen` streams of a
streaming server; a buffered deployment's listeners poll the change log instead.
"""

from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..storage.ports import ChangeLog


class ChangeFeed:
    def __init__(self) -> None:
        self._queues: set[asyncio.Queue[tuple[str, str | None]]] = set()
        self.log: ChangeLog | None = None
        """Set by the kit: where changes go for every instance and the worker to see."""

    def listen(self) -> asyncio.Queue[tuple[str, str | None]]:
        queue: asyncio.Queue[tuple[str, str | None]] = asyncio.Queue()
        self._queues.add(queue)
        return queue

    def close(self, queue: asyncio.Queue[tuple[str, str | None]]) -> None:
        self._queues.discard(queue)

    async def publish(self, kind: str, uri: str | None) -> None:
        """`kind` is `tools`, `prompts`, `resources` (list changed) or `resource` (one `uri` updated)."""
        for queue in list(self._queues):
            queue.put_nowait((kind, uri))
        if self.log is not None:
            await self.log.publish(kind, uri, time.time())
