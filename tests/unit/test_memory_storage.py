"""The in-memory session store and event log: conditional transitions and expiry, as the ports require."""

from __future__ import annotations

import pytest

from lambda_mcp.storage import ConflictError, InMemoryEventLog, InMemorySessionStore, NotFoundError, SessionRecord
from tests.support.records import session_record

pytestmark = pytest.mark.anyio


def _record(session_id: str = "s1", expires_at: float = 100.0) -> SessionRecord:
    return session_record(session_id, expires_at)


async def test_create_is_conditional_on_a_new_id() -> None:
    store = InMemorySessionStore()
    await store.create(_record())
    with pytest.raises(ConflictError):
        await store.create(_record())


async def test_reads_filter_on_expiry_and_touch_slides_it() -> None:
    store = InMemorySessionStore()
    await store.create(_record(expires_at=100.0))
    assert await store.get("s1", 99.0) is not None
    assert await store.get("s1", 100.0) is None
    await store.touch("s1", 50.0, 200.0)
    assert await store.get("s1", 150.0) is not None


async def test_terminated_sessions_are_gone_and_cannot_be_recreated() -> None:
    store = InMemorySessionStore()
    await store.create(_record())
    await store.terminate("s1")
    assert await store.get("s1", 0.0) is None
    with pytest.raises(NotFoundError):
        await store.terminate("s1")
    with pytest.raises(NotFoundError):
        await store.set_log_level("s1", "info")
    with pytest.raises(ConflictError):
        await store.create(_record())


async def test_event_log_replays_only_the_stream_after_an_id() -> None:
    log = InMemoryEventLog()
    a1 = await log.append("s", "a", {"n": 1})
    await log.append("s", "b", {"n": 2})
    a2 = await log.append("s", "a", {"n": 3})
    assert a1.event_id.startswith("a.1.")
    replay = await log.after("s", a1.event_id)
    assert replay is not None and replay[0] == "a" and [e.event_id for e in replay[1]] == [a2.event_id]
    assert await log.after("other-session", a1.event_id) is None
    assert await log.after("s", "a.9.bogus") is None
