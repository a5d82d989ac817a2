"""`DynamoDBChangeLog`: the change feed as short-lived items in one partition (or `shards` of them), read with
a Query (one per shard) after a cursor."""

from __future__ import annotations

import secrets
from typing import Any

from ...protocol.ids import change_cursor
from ..records import Change
from . import keys
from ._client import LazyClient, translated
from .shards import query_shards


class DynamoDBChangeLog:
    def __init__(
        self, table_name: str, *, client: Any | None = None, ttl_seconds: float = 3600.0, shards: int = 1
    ) -> None:
        self.table_name = table_name
        self._client = LazyClient(client)
        self._ttl = ttl_seconds
        self.shards = max(shards, 1)

    async def publish(self, kind: str, uri: str | None, now: float, principal: str | None = None) -> Change:
        change = Change(change_cursor(now, secrets.token_hex(4)), kind, uri, principal)
        item: dict[str, Any] = {
            keys.PK: {"S": keys.changes_pk(secrets.randbelow(self.shards))},
            keys.SK: {"S": change.cursor},
            "kind": {"S": kind},
            keys.EXPIRES_AT: {"N": str(int(now + self._ttl))},
        }
        if uri is not None:
            item["uri"] = {"S": uri}
        if principal is not None:
            item["principal"] = {"S": principal}
        with translated():
            await self._client.call("put_item", TableName=self.table_name, Item=item)
        return change

    async def since(self, cursor: str, now: float, limit: int = 100) -> list[Change]:
        """The key condition starts no earlier than `now - ttl`: every entry before that has expired, so
        expired entries (which TTL deletes late) can never fill a page and hide live ones."""
        start = max(cursor, change_cursor(now - self._ttl))

        def query(partition: str) -> dict[str, Any]:
            return {
                "TableName": self.table_name,
                "KeyConditionExpression": "pk = :pk AND sk > :cursor",
                "ExpressionAttributeValues": {":pk": {"S": partition}, ":cursor": {"S": start}},
                "ConsistentRead": True,
                "Limit": limit,
            }

        with translated():
            partitions = [keys.changes_pk(shard) for shard in range(self.shards)]
            items = await query_shards(self._client, partitions, query, lambda item: str(item[keys.SK]["S"]))
        return [
            Change(
                item[keys.SK]["S"], item["kind"]["S"], item.get("uri", {}).get("S"), item.get("principal", {}).get("S")
            )
            for item in items[:limit]
            if float(item[keys.EXPIRES_AT]["N"]) > now
        ]
