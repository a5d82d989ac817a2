"""The EventLog contract, run against every adapter: ids encode the stream; replay is per stream."""

from __future__ import annotations

import pytest

from lambda_mcp.storage import EventLog

pytestmark = pytest.mark.anyio


async def test_replay_returns_only_that_streams_later_events_in_order(event_log: EventLog) -> None:

    first = await event_log.append("s1", "a", None)
    await event_log.append("s1", "b", {"jsonrpc": "2.0", "method": "other"})
    second = await event_log.append("s1", "a", {"jsonrpc": "2.0", "method": "notifications/progress"})
    third = await event_log.append("s1", "a", {"jsonrpc": "2.0", "id": 1, "result": {}})
    assert first.event_id.startswith("a.1.") and second.seq == 2 and third.seq == 3
    replay = await event_log.after("s1", first.event_id)
    assert replay is not None
    stream, events = replay
    assert stream == "a"
    assert [e.event_id for e in events] == [second.event_id, third.event_id]
    assert events[1].message == {"jsonrpc": "2.0", "id": 1, "result": {}}


async def test_unknown_or_foreign_event_ids_replay_nothing(event_log: EventLog) -> None:

    event = await event_log.append("s1", "a", None)
    assert await event_log.after("s2", event.event_id) is None
    assert await event_log.after("s1", "a.1.forged") is None
    assert await event_log.after("s1", "garbage") is None


async def test_event_ids_are_unique_across_streams_of_a_session(event_log: EventLog) -> None:

    ids = {(await event_log.append("s1", stream, None)).event_id for stream in ("a", "b", "a", "b")}
    assert len(ids) == 4


async def test_events_are_found_by_id_and_streams_read_after_a_sequence_number(event_log: EventLog) -> None:
    first = await event_log.append("s1", "a", {"jsonrpc": "2.0", "method": "m", "params": {"n": 1}})
    second = await event_log.append("s1", "a", {"jsonrpc": "2.0", "method": "m", "params": {"n": 2}})
    await event_log.append("s1", "b", None)
    found = await event_log.get("s1", second.event_id)
    assert found is not None and found.message == second.message and found.seq == 2
    assert await event_log.get("s2", second.event_id) is None
    assert await event_log.get("s1", second.event_id[:-1] + "x") is None
    assert [e.event_id for e in await event_log.read("s1", "a")] == [first.event_id, second.event_id]
    assert [e.seq for e in await event_log.read("s1", "a", after_seq=1)] == [2]
    assert await event_log.read("s1", "missing") == []
