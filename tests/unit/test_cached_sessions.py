"""`CachedSessions`: reads reused within the window, this process's writes seen at once, other
processes' writes within the window, expiry always honoured."""

from __future__ import annotations

from typing import Any

import pytest

from lambda_mcp.storage import InMemorySessionStore, SessionRecord
from lambda_mcp.storage.cached import CachedSessions
from tests.support.records import session_record

pytestmark = pytest.mark.anyio


class CountingStore(InMemorySessionStore):
    def __init__(self) -> None:
        super().__init__()
        self.reads = 0

    async def get(self, session_id: str, now: float) -> SessionRecord | None:
        self.reads += 1
        return await super().get(session_id, now)


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def _record(session_id: str = "s1", expires_at: float = 100.0) -> SessionRecord:
    return session_record(session_id, expires_at)


async def _cached(**kwargs: Any) -> tuple[CountingStore, CachedSessions, Clock]:
    store, clock = CountingStore(), Clock()
    cached = CachedSessions(store, 1.0, clock=clock, **kwargs)
    await cached.create(_record())
    return store, cached, clock


async def test_a_read_is_reused_within_the_window_and_refreshed_after_it() -> None:
    store, cached, clock = await _cached()
    assert (await cached.get("s1", 10.0)) is not None
    assert (await cached.get("s1", 10.0)) is not None
    assert store.reads == 1
    clock.now = 1.0
    assert (await cached.get("s1", 10.0)) is not None
    assert store.reads == 2


async def test_another_process_ending_the_session_is_seen_within_the_window() -> None:
    store, cached, clock = await _cached()
    await cached.get("s1", 10.0)
    await store.terminate("s1")  # another instance, straight to the shared store
    assert await cached.get("s1", 10.0) is not None  # the price of the saved read
    clock.now = 1.0
    assert await cached.get("s1", 10.0) is None


async def test_this_process_writes_are_seen_at_once() -> None:
    store, cached, _ = await _cached()
    await cached.get("s1", 10.0)
    await cached.set_log_level("s1", "error")
    found = await cached.get("s1", 10.0)
    assert found is not None and found.log_level == "error"
    await cached.subscribe("s1", "test://a", True)
    found = await cached.get("s1", 10.0)
    assert found is not None and found.subscriptions == {"test://a"}
    await cached.touch("s1", 10.0, 500.0)
    found = await cached.get("s1", 10.0)
    assert found is not None and found.expires_at == 500.0
    await cached.terminate("s1")
    assert await cached.get("s1", 10.0) is None
    assert store.reads == 5


async def test_an_expired_record_is_never_served_from_memory() -> None:
    _, cached, _ = await _cached()
    assert await cached.get("s1", 99.0) is not None
    assert await cached.get("s1", 100.0) is None


async def test_each_read_gets_its_own_copy() -> None:
    _, cached, _ = await _cached()
    first = await cached.get("s1", 10.0)
    assert first is not None
    first.log_level = "debug"
    first.subscriptions.add("test://x")
    again = await cached.get("s1", 10.0)
    assert again is not None and again.log_level is None and again.subscriptions == set()


async def test_at_most_size_sessions_are_kept() -> None:
    store, cached, _ = await _cached(size=2)
    for sid in ("s2", "s3"):
        await cached.create(_record(sid))
    for sid in ("s1", "s2", "s3"):
        await cached.get(sid, 10.0)
    reads = store.reads
    await cached.get("s3", 10.0)
    await cached.get("s2", 10.0)
    assert store.reads == reads
    await cached.get("s1", 10.0)  # the oldest read was dropped
    assert store.reads == reads + 1
