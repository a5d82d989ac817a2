"""`DynamoDBFacadeStore`: the authorization facade's rows in the state table, one item per row.

Item: pk `FACADE#<kind>#<key>`, sk `FACADE`, the row as JSON in `body`, `version` (refresh rotation),
`n` (counters), `taken` (the nonce of the request that took it), `expires_at` (the table's TTL). Keys
longer than 200 characters (a client id that is a URL) are hashed, so an item key stays small whatever
the client sent.

`take` and `swap` are conditional writes whose answer can be lost after they landed (a 500 after the
write, and botocore's retry then failing its own condition; or every retry failing): both go through
`confirm.confirmed`, recognising their own write on a re-read: `take` by the nonce it stamps (a taken
row stays, marked, until it expires), `swap` by the version it writes.
"""

from __future__ import annotations

import hashlib
import json
import secrets
from typing import Any

from ..confirm import confirmed
from ..errors import ConflictError
from ..facade import encoded
from . import keys
from ._client import LazyClient, translated


def _key(kind: str, key: str) -> dict[str, Any]:
    if len(key) > 200:
        key = "sha256:" + hashlib.sha256(key.encode()).hexdigest()
    return {keys.PK: {"S": keys.facade_pk(kind, key)}, keys.SK: {"S": keys.FACADE_SK}}


def _expiry(expires_at: float) -> dict[str, str]:
    return {"N": str(int(expires_at) + 1)}


class DynamoDBFacadeStore:
    def __init__(self, table_name: str, *, client: Any | None = None) -> None:
        self.table_name = table_name
        self._client = LazyClient(client)

    async def put(self, kind: str, key: str, value: dict[str, Any], expires_at: float, version: str = "") -> None:
        item = {**_key(kind, key), "body": {"S": encoded(value)}, "version": {"S": version}}
        item[keys.EXPIRES_AT] = _expiry(expires_at)
        with translated():
            await self._client.call("put_item", TableName=self.table_name, Item=item)

    async def _item(self, kind: str, key: str) -> dict[str, Any] | None:
        with translated():
            found = await self._client.call(
                "get_item", TableName=self.table_name, Key=_key(kind, key), ConsistentRead=True
            )
        item: dict[str, Any] | None = found.get("Item")
        return item

    async def get(self, kind: str, key: str, now: float) -> tuple[dict[str, Any], str] | None:
        item = await self._item(kind, key)
        if not item or float(item[keys.EXPIRES_AT]["N"]) <= now or "taken" in item:
            return None
        return json.loads(item["body"]["S"]), item.get("version", {}).get("S", "")

    async def take(self, kind: str, key: str, now: float) -> dict[str, Any] | None:
        nonce = secrets.token_urlsafe(12)

        async def write() -> dict[str, Any]:
            with translated():
                found: dict[str, Any] = await self._client.call(
                    "update_item",
                    TableName=self.table_name,
                    Key=_key(kind, key),
                    UpdateExpression="SET #taken = :nonce",
                    ConditionExpression="attribute_exists(#pk) AND #expires_at > :now AND attribute_not_exists(#taken)",
                    ExpressionAttributeNames={"#pk": keys.PK, "#expires_at": keys.EXPIRES_AT, "#taken": "taken"},
                    ExpressionAttributeValues={":now": {"N": str(int(now))}, ":nonce": {"S": nonce}},
                    ReturnValues="ALL_NEW",
                )
            return found.get("Attributes") or {}

        def mine(item: dict[str, Any]) -> bool:
            return bool(item.get("taken", {}).get("S") == nonce)

        try:
            item = await confirmed(write, lambda: self._item(kind, key), mine, f"taking facade row {kind}")
        except ConflictError:
            return None
        if "body" not in item or float(item[keys.EXPIRES_AT]["N"]) <= now:
            return None
        result: dict[str, Any] = json.loads(item["body"]["S"])
        return result

    async def swap(
        self, kind: str, key: str, expected: str, value: dict[str, Any], expires_at: float, version: str, now: float
    ) -> bool:
        item = {**_key(kind, key), "body": {"S": encoded(value)}, "version": {"S": version}}
        item[keys.EXPIRES_AT] = _expiry(expires_at)

        async def write() -> bool:
            with translated():
                await self._client.call(
                    "put_item",
                    TableName=self.table_name,
                    Item=item,
                    ConditionExpression="#version = :expected AND #expires_at > :now AND attribute_not_exists(#taken)",
                    ExpressionAttributeNames={"#version": "version", "#expires_at": keys.EXPIRES_AT, "#taken": "taken"},
                    ExpressionAttributeValues={":expected": {"S": expected}, ":now": {"N": str(int(now))}},
                )
            return True

        def mine(stored: dict[str, Any]) -> bool:
            written = (stored.get("version", {}).get("S"), stored.get("body", {}).get("S"))
            return bool(written == (version, item["body"]["S"]))

        try:
            await confirmed(write, lambda: self._item(kind, key), mine, f"swapping facade row {kind}")
        except ConflictError:
            return False
        return True

    async def delete(self, kind: str, key: str) -> None:
        with translated():
            await self._client.call("delete_item", TableName=self.table_name, Key=_key(kind, key))

    async def count(self, kind: str, key: str, limit: int, expires_at: float, now: float) -> bool:
        """One conditional update: a counter that expired (not yet deleted by TTL) starts again at one."""
        names = {"#n": "n", "#expires_at": keys.EXPIRES_AT, "#body": "body"}
        values = {":one": {"N": "1"}, ":limit": {"N": str(limit)}, ":now": {"N": str(int(now))}}
        try:
            with translated():
                await self._client.call(
                    "update_item",
                    TableName=self.table_name,
                    Key=_key(kind, key),
                    UpdateExpression="ADD #n :one SET #expires_at = if_not_exists(#expires_at, :expiry), #body = :body",
                    ConditionExpression="attribute_not_exists(#n) OR (#n < :limit AND #expires_at > :now)",
                    ExpressionAttributeNames=names,
                    ExpressionAttributeValues={**values, ":expiry": _expiry(expires_at), ":body": {"S": "{}"}},
                )
        except ConflictError:
            current = await self.get(kind, key, now)
            if current is not None:
                return False
            # the counter's window is over but TTL has not deleted it: start a new window
            await self.delete(kind, key)
            return await self.count(kind, key, limit, expires_at, now)
        return True
