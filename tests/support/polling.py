"""Waiting in tests: poll a condition until it holds or a deadline passes, never a fixed sleep.

`wait_until` (sync) and `until` (async) return the condition's first truthy value, or fail the test
naming what was awaited. The only sleeps in the tests are the pauses between two polls here, `stagger`
(a race's spacing), and in test apps' tools and fake peers, which stand for work or a peer taking time.
"""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

import pytest

T = TypeVar("T")
INTERVAL = 0.02


def wait_until(condition: Callable[[], T], *, timeout: float = 10.0, what: str = "the condition") -> T:
    """Poll `condition` until it returns something truthy (returned), or fail after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() >= deadline:
            pytest.fail(f"waited {timeout:g} s for {what}")
        time.sleep(INTERVAL)


async def until(condition: Callable[[], Awaitable[T] | T], *, timeout: float = 10.0, what: str = "the condition") -> T:
    """`wait_until` for async tests: `condition` may be a coroutine function."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if inspect.isawaitable(value):
            value = await value
        if value:
            return value  # type: ignore[return-value]
        if time.monotonic() >= deadline:
            pytest.fail(f"waited {timeout:g} s for {what}")
        await asyncio.sleep(INTERVAL)


async def stagger(seconds: float) -> None:
    """A deliberate pause that shapes a race (how far apart two requests go), not a wait for anything."""
    await asyncio.sleep(seconds)


def after(seconds: float) -> Callable[[], bool]:
    """A condition that holds once `seconds` have passed from now: for a test about time passing (a TTL,
    a touch interval), where the clock itself is what is awaited."""
    start = time.monotonic()
    return lambda: time.monotonic() - start >= seconds
