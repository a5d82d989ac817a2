"""`Lifespan`: the app's process-wide resources, entered once per event loop and shared as `ctx.state`.

In Lambda an execution environment runs one event loop for its whole life (the entrypoints keep it:
`entrypoints/_loop.py`), so the lifespan is entered once, at cold start, and what it yields serves
every warm invocation. `lambda-mcp dev` enters it at server start-up and leaves it at shutdown; the test
client enters it in `async with Client(app)` and leaves it at the block's end. A request served on a
loop where it was not entered yet (an app served some other way) enters it first.

Resources bound to an event loop (an aiohttp or httpx async client, a database pool) stay valid because
each loop gets its own entry: under `lambda-mcp dev --lambda` the HTTP function and the worker run on
their own threads and loops, as they run in their own execution environments in Lambda.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager
from typing import Any

LifespanFunction = Callable[[Any], AbstractAsyncContextManager[Any] | AsyncIterator[Any]]


class Lifespan:
    """Enters `function(app)` on first need per event loop and keeps the value it yielded."""

    def __init__(self, app: Any) -> None:
        self._app = app
        self._function: Callable[[Any], AbstractAsyncContextManager[Any]] | None = None
        self._entered: dict[asyncio.AbstractEventLoop, tuple[Any, AbstractAsyncContextManager[Any]]] = {}
        self._locks: dict[asyncio.AbstractEventLoop, asyncio.Lock] = {}
        self.entries = 0
        """How many times the lifespan was entered in this process (for tests and the dev server's log)."""

    @property
    def registered(self) -> bool:
        return self._function is not None

    def register(self, function: LifespanFunction) -> None:
        if self._function is not None:
            raise ValueError("an app has one lifespan; enter several resources in it with an AsyncExitStack")
        if inspect.isasyncgenfunction(function):
            function = contextlib.asynccontextmanager(function)
        self._function = function  # type: ignore[assignment]

    async def state(self) -> Any:
        """What the lifespan yielded on this loop, entering it first if needed (None without a lifespan)."""
        if self._function is None:
            return None
        loop = asyncio.get_running_loop()
        entry = self._entered.get(loop)
        if entry is not None:
            return entry[0]
        async with self._locks.setdefault(loop, asyncio.Lock()):
            if loop not in self._entered:
                manager = self._function(self._app)
                value = await manager.__aenter__()
                self._entered[loop] = (value, manager)
                self.entries += 1
        return self._entered[loop][0]

    async def start(self) -> None:
        await self.state()

    async def stop(self) -> None:
        """Leave the lifespan entered on this loop (the resources' clean-up runs), if it was."""
        loop = asyncio.get_running_loop()
        entry = self._entered.pop(loop, None)
        self._locks.pop(loop, None)
        if entry is not None:
            await entry[1].__aexit__(None, None, None)
