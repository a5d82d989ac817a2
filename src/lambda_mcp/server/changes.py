"""An in-process feed of list and resource changes, fanned out to the listeners open in this process.

Listeners are the legacy GET streams and 2026 `subscriptions/listen` streams of a streaming server.
A cross-instance feed backed by the state table arrives with the AWS issues; this one serves `dev`.
"""

from __future__ import annotations

import asyncio


class ChangeFeed:
    def __init__(self) -> None:
        self._queues: set[asyncio.Queue[tuple[str, str | None]]] = set()

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
