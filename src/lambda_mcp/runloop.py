"""The execution environment's event loop: one per thread for the life of the process, shared by Mangum,
Powertools' batch processor, the sweeper and the app's lifespan, so loop-bound resources stay valid.

`asyncio.run` would make a new loop per invocation and then unset it: a database pool or HTTP client
the lifespan opened at cold start would be bound to a closed loop by the second invocation.
"""

from __future__ import annotations

import asyncio
import warnings
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


def process_loop() -> asyncio.AbstractEventLoop:
    """This thread's loop (the one Mangum and Powertools also find), created and set if there is none."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        try:
            loop = asyncio.get_event_loop()
        except RuntimeError:
            loop = None
    if loop is None or loop.is_closed():
        loop = asyncio.new_event_loop()
        asyncio.set_event_loop(loop)
    return loop


def run(coroutine: Coroutine[Any, Any, T]) -> T:
    return process_loop().run_until_complete(coroutine)
