"""`DynamoDBSessionStore`: legacy sessions in the state table, every change a conditional write."""

from __future__ import annotations

import json
import secrets
import time
from typing import Any

from ..errors import ConflictError, LimitExceeded, NotFoundError
from ..records import SessionRecord
from . import keys
from ._client import LazyClient, translated

_LIVE = "attribute_exists(pk) AND #terminated = :no AND #expires_at > :now"
_NAMES = {
    "#terminated": "terminated",
    "#expires_at": keys.EXPIRES_AT,
    "#touched_at": "touched_at",
    "#log_level": "log_level",
    "#subscriptions": "subscriptions",
}
"""Every attribute named in an expression goes through a placeholder (several are reserved words)."""


class DynamoDBSessionStore:
    """Sessions as single items; a terminated session stays (until TTL) so its id answers 404 everywhere."""

    def __init__(self, table_name: str, *, client: Any | None = None, consistent_reads: bool = True) -> None:
        self.table_name = table_name
        self._client = LazyClient(client)
        self._consistent = consistent_reads

    def _key(self, session_id: str) -> dict[str, Any]:
        return {keys.PK: {"S": keys.session_pk(session_id)}, keys.SK: {"S": keys.SESSION_SK}}

    async def create(self, record: SessionRecord) -> None:
        item = {
            **self._key(record.session_id),
            "protocol_version": {"S": record.protocol_version},
            "client_capabilities": {"S": json.dumps(record.client_capabilities)},
            "client_info": {"S": json.dumps(record.client_info)},
            "created_at": {"N": repr(record.created_at)},
            keys.EXPIRES_AT: {"N": str(int(record.expires_at))},
            "touched_at": {"N": repr(record.touched_at)},
            "terminated": {"BOOL": False},
            "write_nonce": {"S": (nonce := secrets.token_hex(8))},  # tells botocore's retry from a second create
        }
        if record.subscriptions:
            item["subscriptions"] = {"SS": sorted(record.subscriptions)}
        if record.principal is not None:
            item["principal"] = {"S": record.principal}
        if record.log_level is not None:
            item["log_level"] = {"S": record.log_level}
        try:
            with translated(ConflictError, f"session {record.session_id} exists"):
                await self._client.call(
                    "put_item", TableName=self.table_name, Item=item, ConditionExpression="attribute_not_exists(pk)"
                )
        except ConflictError:  # a retry after a lost answer meets its own write: the nonce says so
            if not await self._is_ours(record.session_id, nonce):
                raise

    async def _is_ours(self, session_id: str, nonce: str) -> bool:
        with translated():
            found = (
                await self._client.call(
                    "get_item", TableName=self.table_name, Key=self._key(session_id), ConsistentRead=True
                )
            ).get("Item")
        return found is not None and found.get("write_nonce", {}).get("S") == nonce

    async def get(self, session_id: str, now: float) -> SessionRecord | None:
        with translated():
            found = (
                await self._client.call(
                    "get_item", TableName=self.table_name, Key=self._key(session_id), ConsistentRead=self._consistent
                )
            ).get("Item")
        if found is None or found["terminated"]["BOOL"] or float(found[keys.EXPIRES_AT]["N"]) <= now:
            return None
        return SessionRecord(
            session_id=session_id,
            protocol_version=found["protocol_version"]["S"],
            client_capabilities=json.loads(found["client_capabilities"]["S"]),
            client_info=json.loads(found["client_info"]["S"]),
            created_at=float(found["created_at"]["N"]),
            expires_at=float(found[keys.EXPIRES_AT]["N"]),
            principal=found.get("principal", {}).get("S"),
            log_level=found.get("log_level", {}).get("S"),
            subscriptions=set(found.get("subscriptions", {}).get("SS", [])),
            touched_at=float(found["touched_at"]["N"]),
        )

    async def _update(
        self,
        session_id: str,
        expression: str,
        values: dict[str, Any],
        now: float | None = None,
        condition: str = _LIVE,
    ) -> None:
        with translated(NotFoundError, f"session {session_id} is not live"):
            await self._client.call(
                "update_item",
                TableName=self.table_name,
                Key=self._key(session_id),
                UpdateExpression=expression,
                ConditionExpression=condition,
                ExpressionAttributeNames=_names(expression, condition),
                ExpressionAttributeValues={
                    ":no": {"BOOL": False},
                    ":now": {"N": str(int(time.time() if now is None else now))},
                    **values,
                },
            )

    async def touch(self, session_id: str, now: float, expires_at: float) -> None:
        values = {":exp": {"N": str(int(expires_at))}, ":t": {"N": repr(now)}}
        await self._update(session_id, "SET #expires_at = :exp, #touched_at = :t", values, now)

    async def set_log_level(self, session_id: str, level: str) -> None:
        await self._update(session_id, "SET #log_level = :level", {":level": {"S": level}})

    async def subscribe(self, session_id: str, uri: str, subscribed: bool, *, limit: int | None = None) -> None:
        """One atomic string-set update (an emptied set drops the attribute, read back as no subscriptions);
        an addition is conditioned on the set having room for a new URI."""
        if not subscribed:
            await self._update(session_id, "DELETE #subscriptions :uri", {":uri": {"SS": [uri]}})
            return
        if limit is None:
            await self._update(session_id, "ADD #subscriptions :uri", {":uri": {"SS": [uri]}})
            return
        room = f"{_LIVE} AND (attribute_not_exists(#subscriptions) OR size(#subscriptions) < :limit"
        room += " OR contains(#subscriptions, :one))"
        values = {":uri": {"SS": [uri]}, ":one": {"S": uri}, ":limit": {"N": str(limit)}}
        try:
            await self._update(session_id, "ADD #subscriptions :uri", values, condition=room)
        except NotFoundError:
            if await self.get(session_id, time.time()) is None:
                raise
            raise LimitExceeded(f"session {session_id} holds {limit} subscriptions") from None

    async def terminate(self, session_id: str) -> None:
        await self._update(session_id, "SET #terminated = :yes", {":yes": {"BOOL": True}})


def _names(*expressions: str) -> dict[str, str]:
    return {k: v for k, v in _NAMES.items() if any(k in e for e in expressions)}
