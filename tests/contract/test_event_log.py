"""The EventLog contract, run against every adapter: ids encode the stream; replay is per stream."""

from __future__ import annotations

from typing import Any

import pytest

from lambda_mcp.storage import EventLog, InMemoryEventLog

pytestmark = pytest.mark.anyio


def _log(backend: tuple[str, Any]) -> EventLog:
    name, resource = backend
    if resource is None:
        return InMemoryEventLog()
    from lambda_mcp.storage.dynamodb import DynamoDBEventLog

    client, table = resource
    return DynamoDBEventLog(table, client=client)


async def test_replay_returns_only_that_streams_later_events_in_order(backend: tuple[str, Any]) -> None:
    log = _log(backend)
    first = await log.append("s1", "a", None)
    await log.append("s1", "b", {"jsonrpc": "2.0", "method": "other"})
    second = await log.append("s1", "a", {"jsonrpc": "2.0", "method": "notifications/progress"})
    third = await log.append("s1", "a", {"jsonrpc": "2.0", "id": 1, "result": {}})
    assert first.event_id.startswith("a.1.") and second.seq == 2 and third.seq == 3
    replay = await log.after("s1", first.event_id)
    assert replay is not None
    stream, events = replay
    assert stream == "a"
    assert [e.event_id for e in events] == [second.event_id, third.event_id]
    assert events[1].message == {"jsonrpc": "2.0", "id": 1, "result": {}}


async def test_unknown_or_foreign_event_ids_replay_nothing(backend: tuple[str, Any]) -> None:
    log = _log(backend)
    event = await log.append("s1", "a", None)
    assert await log.after("s2", event.event_id) is None
    assert await log.after("s1", "a.1.forged") is None
    assert await log.after("s1", "garbage") is None


async def test_event_ids_are_unique_across_streams_of_a_session(backend: tuple[str, Any]) -> None:
    log = _log(backend)
    ids = {(await log.append("s1", stream, None)).event_id for stream in ("a", "b", "a", "b")}
    assert len(ids) == 4
