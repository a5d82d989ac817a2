"""`DynamoDBCallStore`: suspended legacy calls as items in their session's partition.

The runner's fields travel as one JSON `body`; answers are a map written key by key (a
conditional `SET answers.#key`), so answers from several instances never overwrite each other
or the runner's progress.
"""

from __future__ import annotations

import json
from typing import Any

from ..errors import ConflictError
from ..records import CallRecord
from . import keys
from ._client import LazyClient, translated

_NAMES = {
    "#nonce": "nonce",
    "#body": "body",
    "#answers": "answers",
    "#version": "version",
    "#expires_at": keys.EXPIRES_AT,
}
"""Every attribute in an expression goes through a placeholder (some are reserved words)."""


def _body(record: CallRecord) -> str:
    fields = {
        "request": record.request,
        "created_at": record.created_at,
        "delivered": record.delivered,
        "checkpoints": record.checkpoints,
        "awaiting": record.awaiting,
        "response": record.response,
        "task_id": record.task_id,
    }
    return json.dumps(fields, separators=(",", ":"))


class DynamoDBCallStore:
    def __init__(self, table_name: str, *, client: Any | None = None) -> None:
        self.table_name = table_name
        self._client = LazyClient(client)

    def _key(self, session_id: str, stream_id: str) -> dict[str, Any]:
        return {keys.PK: {"S": keys.session_pk(session_id)}, keys.SK: {"S": keys.call_sk(stream_id)}}

    def _record(self, session_id: str, stream_id: str, item: dict[str, Any]) -> CallRecord:
        body = json.loads(item["body"]["S"]) if "body" in item else {}
        answers = {k: json.loads(v["S"]) for k, v in item.get("answers", {}).get("M", {}).items()}
        return CallRecord(
            session_id=session_id,
            stream_id=stream_id,
            nonce=item.get("nonce", {}).get("S", ""),
            request=body.get("request", {}),
            created_at=float(body.get("created_at", 0.0)),
            expires_at=float(item[keys.EXPIRES_AT]["N"]),
            delivered=int(body.get("delivered", 0)),
            checkpoints=int(body.get("checkpoints", 0)),
            awaiting=list(body.get("awaiting", [])),
            answers=answers,
            response=body.get("response"),
            cancelled_at=float(item.get("cancelled_at", {}).get("N", "0")),
            version=int(item.get("version", {}).get("N", "0")),
            task_id=body.get("task_id"),
        )

    async def start(self, record: CallRecord) -> CallRecord:
        with translated():
            item = (
                await self._client.call(
                    "update_item",
                    TableName=self.table_name,
                    Key=self._key(record.session_id, record.stream_id),
                    UpdateExpression=(
                        "SET #nonce = :nonce, #body = :body, #answers = :none, #version = :one, #expires_at = :exp"
                    ),
                    ExpressionAttributeNames=_NAMES,
                    ExpressionAttributeValues={
                        ":nonce": {"S": record.nonce},
                        ":body": {"S": _body(record)},
                        ":none": {"M": {}},
                        ":one": {"N": "1"},
                        ":exp": {"N": str(int(record.expires_at))},
                    },
                    ReturnValues="ALL_NEW",
                )
            )["Attributes"]
        return self._record(record.session_id, record.stream_id, item)

    async def get(self, session_id: str, stream_id: str, now: float) -> CallRecord | None:
        with translated():
            item = (
                await self._client.call(
                    "get_item", TableName=self.table_name, Key=self._key(session_id, stream_id), ConsistentRead=True
                )
            ).get("Item")
        if item is None or float(item[keys.EXPIRES_AT]["N"]) <= now:
            return None
        return self._record(session_id, stream_id, item)

    async def save(self, record: CallRecord) -> CallRecord:
        with translated(ConflictError, f"call {record.stream_id} changed"):
            item = (
                await self._client.call(
                    "update_item",
                    TableName=self.table_name,
                    Key=self._key(record.session_id, record.stream_id),
                    UpdateExpression="SET #body = :body, #version = #version + :one, #expires_at = :exp",
                    ConditionExpression="#nonce = :nonce AND #version = :version",
                    ExpressionAttributeNames={k: v for k, v in _NAMES.items() if k != "#answers"},
                    ExpressionAttributeValues={
                        ":body": {"S": _body(record)},
                        ":one": {"N": "1"},
                        ":exp": {"N": str(int(record.expires_at))},
                        ":nonce": {"S": record.nonce},
                        ":version": {"N": str(record.version)},
                    },
                    ReturnValues="ALL_NEW",
                )
            )["Attributes"]
        return self._record(record.session_id, record.stream_id, item)

    async def answer(self, session_id: str, stream_id: str, nonce: str, key: str, response: dict[str, Any]) -> bool:
        if not nonce:
            return False
        try:
            with translated(ConflictError):
                await self._client.call(
                    "update_item",
                    TableName=self.table_name,
                    Key=self._key(session_id, stream_id),
                    UpdateExpression="SET #answers.#key = :response",
                    ConditionExpression="#nonce = :nonce AND attribute_not_exists(#answers.#key)",
                    ExpressionAttributeNames={"#key": key, "#nonce": "nonce", "#answers": "answers"},
                    ExpressionAttributeValues={":response": {"S": json.dumps(response)}, ":nonce": {"S": nonce}},
                )
        except ConflictError:
            return False
        return True

    async def cancel(self, session_id: str, stream_id: str, now: float) -> CallRecord | None:
        """A conditional update: an unknown (or expired) stream fails the condition, and nothing is written."""
        try:
            with translated(ConflictError):
                item = (
                    await self._client.call(
                        "update_item",
                        TableName=self.table_name,
                        Key=self._key(session_id, stream_id),
                        UpdateExpression="SET #cancelled_at = :now",
                        ConditionExpression="attribute_exists(pk) AND #expires_at > :now",
                        ExpressionAttributeNames={"#expires_at": keys.EXPIRES_AT, "#cancelled_at": "cancelled_at"},
                        ExpressionAttributeValues={":now": {"N": repr(now)}},
                        ReturnValues="ALL_NEW",
                    )
                )["Attributes"]
        except ConflictError:
            return None
        return self._record(session_id, stream_id, item)
