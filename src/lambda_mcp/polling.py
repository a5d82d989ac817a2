"""`Backoff`: the delays of a loop that polls storage until something happens or its time is up.

The kit never waits on a signal across instances; it re-reads durable state (a task record, a
suspended call's answers, the change feed), starting fast and backing off, and hands back before
the invocation's deadline.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Callable


class Backoff:
    """Delays from `first`, doubling up to `limit`; `sleep()` refuses a delay that would pass `until`."""

    def __init__(
        self,
        until: float | None,
        *,
        first: float = 0.05,
        limit: float = 1.0,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.until = math.inf if until is None else until
        self.first = first
        self.limit = limit
        self.clock = clock
        self.delay = first

    async def sleep(self) -> bool:
        """Wait the next delay and return True, or return False at once if it would end past `until`."""
        if self.clock() + self.delay >= self.until:
            return False
        await asyncio.sleep(self.delay)
        self.delay = min(self.delay * 2, self.limit)
        return True

    def reset(self) -> None:
        """Poll fast again (something changed that makes a quick follow-up likely)."""
        self.delay = self.first
