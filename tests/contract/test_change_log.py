"""The ChangeLog contract, run against every adapter: ordered reads after a cursor, nothing before it, expiry."""

from __future__ import annotations

import time

import pytest

from lambda_mcp.protocol.ids import change_cursor as cursor_at
from lambda_mcp.storage import ChangeLog

pytestmark = pytest.mark.anyio


async def test_readers_see_changes_after_their_cursor_in_order(change_log: ChangeLog) -> None:
    now = time.time()
    before = await change_log.publish("tools", None, now - 1)
    start = cursor_at(now)
    first = await change_log.publish("resource", "test://a", now + 0.001)
    second = await change_log.publish("prompts", None, now + 0.002)
    seen = await change_log.since(start, time.time())
    assert [(c.kind, c.uri) for c in seen] == [("resource", "test://a"), ("prompts", None)]
    assert before not in seen
    assert [c.cursor for c in await change_log.since(first.cursor, time.time())] == [second.cursor]
    assert await change_log.since(second.cursor, time.time()) == []


async def test_changes_published_in_the_same_microsecond_are_all_seen(change_log: ChangeLog) -> None:
    now = time.time()
    start = cursor_at(now - 1)
    published = {(await change_log.publish("resource", f"test://{n}", now)).cursor for n in range(3)}
    assert {c.cursor for c in await change_log.since(start, time.time())} == published


async def test_expired_changes_are_not_read(change_log: ChangeLog) -> None:
    old = time.time() - 7200
    await change_log.publish("tools", None, old)
    assert await change_log.since(cursor_at(old - 1), time.time()) == []
