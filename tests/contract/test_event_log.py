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


def _note(n: int) -> dict[str, object]:
    return {"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": "p", "progress": n}}


async def test_a_position_is_written_once_and_a_missing_one_is_filled_later_in_order(event_log: EventLog) -> None:
    """Issue 41 (finding 6): a task's runs log their n-th message at position n; a re-run writing n again
    is a no-op, and a position whose write failed in an earlier run is filled by the next."""
    assert await event_log.put("s1", "t", 1, _note(1))
    assert await event_log.put("s1", "t", 3, _note(3))  # 2 was dropped
    assert not await event_log.put("s1", "t", 1, {"jsonrpc": "2.0", "method": "again"})  # the re-run: no-op
    assert await event_log.put("s1", "t", 2, _note(2))  # the re-run fills the gap
    assert not await event_log.put("s1", "t", 3, _note(3))
    assert await event_log.put("s1", "t", 4, _note(4))
    events = await event_log.read("s1", "t")
    assert [e.seq for e in events] == [1, 2, 3, 4]
    assert [e.message for e in events] == [_note(n) for n in (1, 2, 3, 4)]  # the first write of each kept
    assert [e.seq for e in await event_log.read("s1", "t", after_seq=2)] == [3, 4]  # a reader past 2 goes on
    replay = await event_log.after("s1", events[1].event_id)
    assert replay is not None and [e.seq for e in replay[1]] == [3, 4]
    found = await event_log.get("s1", events[3].event_id)
    assert found is not None and found.message == _note(4)
    assert await event_log.read("s2", "t") == [] and await event_log.read("s1", "other") == []


async def test_positions_past_a_gap_are_read_and_replayed(event_log: EventLog) -> None:
    assert await event_log.put("s1", "t", 2, _note(2))
    assert await event_log.put("s1", "t", 10, _note(10))  # sorted as numbers, not as text
    events = await event_log.read("s1", "t")
    assert [e.seq for e in events] == [2, 10] and all(e.event_id.startswith("t.") for e in events)
    replay = await event_log.after("s1", events[0].event_id)
    assert replay is not None and replay[0] == "t" and [e.seq for e in replay[1]] == [10]
