"""`Outbox`: what one run of a re-run call sends, numbered in run order, so that a re-run does not send
again what an earlier round delivered (the replay ledger of `dispatch/rounds.py` uses it on every wire).
A task's runs do not use it: they log each message at its ordinal, conditionally (`tasks/notify.py`), so
one whose write failed does not shift the count of those after it."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

Deliver = Callable[[dict[str, Any]], Awaitable[None]]


class Outbox:
    """What one run sends, numbered in run order; the first `delivered` messages (an earlier round's) are
    dropped, since the client has them. `sent` is how many this run produced in all."""

    def __init__(self, deliver: Deliver, delivered: int = 0) -> None:
        self._deliver = deliver
        self.delivered = delivered
        self.sent = 0

    async def send(self, message: dict[str, Any]) -> None:
        self.sent += 1
        if self.sent > self.delivered:
            await self._deliver(message)

    @property
    def reached(self) -> int:
        """How many of the run's messages the client will have once this run's are delivered."""
        return max(self.sent, self.delivered)
