"""`DynamoDBEventLog`: per-session SSE streams in the state table, replayable after an event id."""

from __future__ import annotations

import json
import time
from typing import Any

from ...protocol.ids import EventId, parse_event_id
from ..errors import ConflictError
from ..records import StoredEvent
from . import keys
from ._client import LazyClient, translated


class DynamoDBEventLog:
    """Each append takes the stream's next sequence number from a counter item, then writes the
    event conditionally; a `put` writes at the position its writer gives, conditionally, with no counter.
    Ids are `<stream>.<seq>.<nonce>` like the in-memory log's; the sort key `EVENT#<stream>#<seq>`, zero
    padded, keeps a stream's events in `seq` order."""

    def __init__(self, table_name: str, *, client: Any | None = None, ttl_seconds: float = 3600.0) -> None:
        self.table_name = table_name
        self._client = LazyClient(client)
        self._ttl = ttl_seconds

    async def append(
        self, session_id: str, stream_id: str, message: dict[str, object] | None, *, expires_at: float | None = None
    ) -> StoredEvent:
        expires = {"N": str(int(expires_at if expires_at is not None else time.time() + self._ttl))}
        pk = {"S": keys.session_pk(session_id)}
        with translated():
            counter = await self._client.call(
                "update_item",
                TableName=self.table_name,
                Key={keys.PK: pk, keys.SK: {"S": keys.stream_sk(stream_id)}},
                UpdateExpression="ADD #seq :one SET #expires_at = :exp",
                ExpressionAttributeNames={"#seq": "seq", "#expires_at": keys.EXPIRES_AT},
                ExpressionAttributeValues={":one": {"N": "1"}, ":exp": expires},
                ReturnValues="UPDATED_NEW",
            )
        seq = int(counter["Attributes"]["seq"]["N"])
        event_id = EventId.new(stream_id, seq).format()
        try:
            await self._write(session_id, stream_id, seq, event_id, message, expires)
        except ConflictError:  # a retry after a lost answer meets its own write: the id (with its nonce) says
            if await self.get(session_id, event_id) is None:
                raise
        return StoredEvent(stream_id, seq, event_id, message)

    async def put(
        self,
        session_id: str,
        stream_id: str,
        seq: int,
        message: dict[str, object] | None,
        *,
        expires_at: float | None = None,
    ) -> bool:
        expires = {"N": str(int(expires_at if expires_at is not None else time.time() + self._ttl))}
        try:  # whoever wrote the position (an earlier run, or this write before its answer was lost), it is done
            await self._write(session_id, stream_id, seq, EventId.new(stream_id, seq).format(), message, expires)
        except ConflictError:
            return False
        return True

    async def _write(
        self,
        session_id: str,
        stream_id: str,
        seq: int,
        event_id: str,
        message: dict[str, object] | None,
        expires: dict[str, str],
    ) -> None:
        """Write the event at `seq` unless the position is taken (`ConflictError`)."""
        item = {
            keys.PK: {"S": keys.session_pk(session_id)},
            keys.SK: {"S": keys.event_sk(stream_id, seq)},
            "event_id": {"S": event_id},
            "message": {"S": json.dumps(message)},
            keys.EXPIRES_AT: expires,
        }
        with translated(ConflictError, f"event {event_id} exists"):
            await self._client.call(
                "put_item", TableName=self.table_name, Item=item, ConditionExpression="attribute_not_exists(sk)"
            )

    async def after(self, session_id: str, event_id: str) -> tuple[str, list[StoredEvent]] | None:
        position = parse_event_id(event_id)
        if position is None:
            return None
        stream_id, seq = position.stream, position.seq
        live = await self._live_items(session_id, stream_id, seq)
        if not live or live[0]["event_id"]["S"] != event_id:
            return None
        return stream_id, [self._event(stream_id, item) for item in live[1:]]

    async def get(self, session_id: str, event_id: str) -> StoredEvent | None:
        position = parse_event_id(event_id)
        if position is None:
            return None
        stream_id, seq = position.stream, position.seq
        key = {keys.PK: {"S": keys.session_pk(session_id)}, keys.SK: {"S": keys.event_sk(stream_id, seq)}}
        with translated():
            item = (await self._client.call("get_item", TableName=self.table_name, Key=key, ConsistentRead=True)).get(
                "Item"
            )
        if item is None or item["event_id"]["S"] != event_id or float(item[keys.EXPIRES_AT]["N"]) <= time.time():
            return None
        return self._event(stream_id, item)

    async def read(self, session_id: str, stream_id: str, after_seq: int = 0) -> list[StoredEvent]:
        return [self._event(stream_id, item) for item in await self._live_items(session_id, stream_id, after_seq + 1)]

    async def _live_items(self, session_id: str, stream_id: str, from_seq: int) -> list[dict[str, Any]]:
        """The stream's unexpired event items from `from_seq` on, in order (a consistent Query)."""
        now = time.time()
        query = {
            "TableName": self.table_name,
            "KeyConditionExpression": "pk = :pk AND sk BETWEEN :from AND :to",
            "ExpressionAttributeValues": {
                ":pk": {"S": keys.session_pk(session_id)},
                ":from": {"S": keys.event_sk(stream_id, from_seq)},
                ":to": {"S": keys.event_sk(stream_id, 9_999_999_999)},
            },
            "ConsistentRead": True,
        }

        def every_page(client: Any) -> list[dict[str, Any]]:
            pages = client.get_paginator("query").paginate(**query)
            return [item for page in pages for item in page.get("Items", [])]

        with translated():
            items = await self._client.run(every_page)
        return [item for item in items if float(item[keys.EXPIRES_AT]["N"]) > now]

    @staticmethod
    def _event(stream_id: str, item: dict[str, Any]) -> StoredEvent:
        return StoredEvent(
            stream_id,
            int(item[keys.SK]["S"].rsplit("#", 1)[1]),
            item["event_id"]["S"],
            json.loads(item["message"]["S"]),
        )
