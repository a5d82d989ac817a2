"""DynamoDB adapter for the task store: one item per task, conditional writes, listing through the owner
and due indexes."""

from __future__ import annotations

import json
from typing import Any

from ..cursors import decode_cursor, encode_cursor
from ..errors import ConflictError
from ..records import TERMINAL, StepRecord, TaskRecord, listed
from . import keys
from ._client import LazyClient, translated
from .shards import query_shards

_NOT_FINAL = "#version = :version AND NOT #status IN (" + ", ".join(f":final{i}" for i in range(len(TERMINAL))) + ")"
_FINAL_VALUES = {f":final{i}": {"S": status} for i, status in enumerate(sorted(TERMINAL))}
_LIVE = "#expires_at > :now"


class DynamoDBTaskStore:
    """The whole record is one item: a few key attributes for conditions and the index, the rest as JSON."""

    def __init__(self, table_name: str, *, client: Any | None = None, shards: int = 1) -> None:
        self.table_name = table_name
        self._client = LazyClient(client)
        self.shards = max(shards, 1)
        """Shards of the due index (a task's is fixed by its id; the sweeper queries them all)."""

    def _key(self, task_id: str) -> dict[str, Any]:
        return {keys.PK: {"S": keys.task_pk(task_id)}, keys.SK: {"S": keys.TASK_SK}}

    def _item(self, record: TaskRecord) -> dict[str, Any]:
        due: dict[str, Any] = {}
        if record.sweepable:  # a sparse index: only working tasks are in it
            due = {
                keys.DUE_PK: {"S": keys.due_pk(record.task_id, self.shards)},
                keys.DUE_SK: {"S": keys.due_sk(record.due_at, record.task_id)},
            }
        return {
            **self._key(record.task_id),
            **due,
            keys.OWNER_PK: {"S": keys.owner_pk(record.owner)},
            keys.CREATED_SK: {"S": keys.created_sk(record.created_at, record.task_id)},
            keys.EXPIRES_AT: {"N": str(int(record.expires_at))},
            "status": {"S": record.status},
            "version": {"N": str(record.version)},
            "body": {"S": _json(record)},
            "listing": {"S": _json(listed(record))},  # all the owner index holds besides keys and expiry
        }

    @staticmethod
    def _record(item: dict[str, Any], attribute: str = "body") -> TaskRecord:
        return TaskRecord.from_stored(json.loads(item[attribute]["S"]))

    async def create(self, record: TaskRecord) -> None:
        with translated(ConflictError, f"task {record.task_id} exists"):
            await self._client.call(
                "put_item",
                TableName=self.table_name,
                Item=self._item(record),
                ConditionExpression="attribute_not_exists(pk)",
            )

    async def get(self, task_id: str, now: float) -> TaskRecord | None:
        with translated():
            item = (
                await self._client.call(
                    "get_item", TableName=self.table_name, Key=self._key(task_id), ConsistentRead=True
                )
            ).get("Item")
        if item is None or float(item[keys.EXPIRES_AT]["N"]) <= now:
            return None
        return self._record(item)

    async def save(self, record: TaskRecord) -> TaskRecord:
        saved = record.replace(version=record.version + 1)
        with translated(ConflictError, f"task {record.task_id} changed or is final"):
            await self._client.call(
                "put_item",
                TableName=self.table_name,
                Item=self._item(saved),
                ConditionExpression=_NOT_FINAL,
                ExpressionAttributeNames={"#version": "version", "#status": "status"},
                ExpressionAttributeValues={":version": {"N": str(record.version)}, **_FINAL_VALUES},
            )
        return saved

    async def void(self, record: TaskRecord) -> TaskRecord:
        """One conditional PutItem: over no item (a tombstone a late create meets), or one still at version 0."""
        if record.version != 0:
            raise ConflictError(f"task {record.task_id} moved on")
        saved = record.replace(version=1)
        with translated(ConflictError, f"task {record.task_id} moved on"):
            await self._client.call(
                "put_item",
                TableName=self.table_name,
                Item=self._item(saved),
                ConditionExpression="attribute_not_exists(pk) OR #version = :created",
                ExpressionAttributeNames={"#version": "version"},
                ExpressionAttributeValues={":created": {"N": "0"}},
            )
        return saved

    def _retry_key(self, key: str) -> dict[str, Any]:
        return {keys.PK: {"S": keys.retry_key_pk(key)}, keys.SK: {"S": keys.RETRY_KEY_SK}}

    async def bind_retry_key(
        self, key: str, task_id: str, now: float, expires_at: float, *, replacing: str | None = None
    ) -> None:
        """A small item (about 100 bytes, 1 write unit) that TTL deletes after the window."""
        if replacing is None:
            condition = "attribute_not_exists(pk) OR #expires_at <= :now"
            names, values = {"#expires_at": keys.EXPIRES_AT}, {":now": {"N": str(int(now))}}
        else:
            condition = "#task_id = :replacing"
            names, values = {"#task_id": "task_id"}, {":replacing": {"S": replacing}}
        with translated(ConflictError, f"retry key {key} is bound"):
            await self._client.call(
                "put_item",
                TableName=self.table_name,
                Item={
                    **self._retry_key(key),
                    "task_id": {"S": task_id},
                    keys.EXPIRES_AT: {"N": str(int(expires_at))},
                },
                ConditionExpression=condition,
                ExpressionAttributeNames=names,
                ExpressionAttributeValues=values,
            )

    async def retry_key_task(self, key: str, now: float) -> str | None:
        with translated():
            item = (
                await self._client.call(
                    "get_item", TableName=self.table_name, Key=self._retry_key(key), ConsistentRead=True
                )
            ).get("Item")
        if item is None or float(item[keys.EXPIRES_AT]["N"]) <= now:
            return None
        return str(item["task_id"]["S"])

    async def list_owned(
        self, owner: str, now: float, cursor: str | None = None, limit: int = 50
    ) -> tuple[list[TaskRecord], str | None]:
        query: dict[str, Any] = {
            "TableName": self.table_name,
            "IndexName": keys.BY_OWNER_INDEX,
            "KeyConditionExpression": "#owner = :owner",
            "FilterExpression": _LIVE,
            "ExpressionAttributeNames": {"#owner": keys.OWNER_PK, "#expires_at": keys.EXPIRES_AT},
            "ExpressionAttributeValues": {":owner": {"S": keys.owner_pk(owner)}, ":now": {"N": str(int(now))}},
            "Limit": limit,
        }
        if cursor is not None:
            position = decode_cursor(cursor)
            if position.get("o") != owner or not isinstance(position.get("k"), dict):
                raise ValueError("invalid cursor")
            query["ExclusiveStartKey"] = position["k"]
        with translated():
            page = await self._client.call("query", **query)
        records = [r for r in (self._record(i, "listing") for i in page.get("Items", [])) if r.live(now)]
        last = page.get("LastEvaluatedKey")
        return records, encode_cursor({"o": owner, "k": last}) if last else None

    async def list_due(self, now: float, limit: int = 100) -> list[str]:
        """One Query per shard of the sparse `by-due` index, which projects keys only (the sweeper re-reads
        each task)."""

        def query(partition: str) -> dict[str, Any]:
            return {
                "TableName": self.table_name,
                "IndexName": keys.BY_DUE_INDEX,
                "KeyConditionExpression": "#due_pk = :due AND #due_sk < :now",
                "ExpressionAttributeNames": {"#due_pk": keys.DUE_PK, "#due_sk": keys.DUE_SK},
                "ExpressionAttributeValues": {":due": {"S": partition}, ":now": {"S": keys.due_sk(now, "~")}},
                "Limit": limit,
            }

        with translated():
            items = await query_shards(
                self._client, keys.due_pks(self.shards), query, lambda item: str(item[keys.DUE_SK]["S"])
            )
        # the index is eventually consistent: callers re-read each record before acting on it
        return [item[keys.PK]["S"].removeprefix("TASK#") for item in items[:limit]]

    async def mark_stopped(self, task_id: str, expires_at: float) -> None:
        key = {keys.PK: {"S": keys.task_pk(task_id)}, keys.SK: {"S": keys.TASK_STOP_SK}}
        with translated():
            await self._client.call(
                "put_item",
                TableName=self.table_name,
                Item={**key, keys.EXPIRES_AT: {"N": str(int(expires_at))}},
            )

    async def stopped(self, task_id: str, now: float) -> bool:
        """One eventually consistent GetItem of the flag item (0.5 read units; a cancel is seen within about a
        second), not of the task's item, which may be 350 KB (44 read units)."""
        key = {keys.PK: {"S": keys.task_pk(task_id)}, keys.SK: {"S": keys.TASK_STOP_SK}}
        with translated():
            item = (await self._client.call("get_item", TableName=self.table_name, Key=key)).get("Item")
        return item is not None

    async def drop_due(self, task_id: str) -> None:
        """Remove the index attributes (the item may have expired; TTL deletes it later)."""
        try:
            with translated(ConflictError):
                await self._client.call(
                    "update_item",
                    TableName=self.table_name,
                    Key=self._key(task_id),
                    UpdateExpression="REMOVE #due_pk, #due_sk",
                    ConditionExpression="attribute_exists(pk)",
                    ExpressionAttributeNames={"#due_pk": keys.DUE_PK, "#due_sk": keys.DUE_SK},
                )
        except ConflictError:
            return

    # -- checkpoints (`ctx.step`, `ctx.sleep`): small items beside the task's, never inside it ----------
    def _step_key(self, task_id: str, name: str) -> dict[str, Any]:
        return {keys.PK: {"S": keys.task_pk(task_id)}, keys.SK: {"S": keys.step_sk(name)}}

    async def steps(self, task_id: str, now: float) -> dict[str, StepRecord]:
        """One consistent Query of the task's `STEP#` items (page after page): the task's item (up to 350 KB)
        and its stop flag are not read."""
        query = {
            "TableName": self.table_name,
            "KeyConditionExpression": "pk = :pk AND begins_with(sk, :step)",
            "ExpressionAttributeValues": {":pk": {"S": keys.task_pk(task_id)}, ":step": {"S": keys.STEP_PREFIX}},
            "ConsistentRead": True,
        }

        def every_page(client: Any) -> list[dict[str, Any]]:
            return [item for page in client.get_paginator("query").paginate(**query) for item in page.get("Items", [])]

        with translated():
            items = await self._client.run(every_page)
        found = {}
        for item in items:
            if float(item[keys.EXPIRES_AT]["N"]) <= now:
                continue
            name = item[keys.SK]["S"].removeprefix(keys.STEP_PREFIX)
            done = item["state"]["S"] == "done"
            result = json.loads(item["result"]["S"]) if done else None
            found[name] = StepRecord(name, done, result, item["run"]["S"])
        return found

    async def start_step(self, task_id: str, name: str, run: str, expires_at: float) -> None:
        item = {**self._step_key(task_id, name), "state": {"S": "started"}, "run": {"S": run}}
        with translated(ConflictError, f"task {task_id}: step {name} is recorded"):
            await self._client.call(
                "put_item",
                TableName=self.table_name,
                Item={**item, keys.EXPIRES_AT: {"N": str(int(expires_at))}},
                ConditionExpression="attribute_not_exists(pk)",
            )

    async def finish_step(self, task_id: str, name: str, run: str, result: Any, expires_at: float) -> None:
        item = {**self._step_key(task_id, name), "state": {"S": "done"}, "run": {"S": run}}
        item["result"] = {"S": json.dumps(result, separators=(",", ":"))}
        with translated(ConflictError, f"task {task_id}: step {name} is done"):
            await self._client.call(
                "put_item",
                TableName=self.table_name,
                Item={**item, keys.EXPIRES_AT: {"N": str(int(expires_at))}},
                ConditionExpression="attribute_not_exists(pk) OR #state = :started",
                ExpressionAttributeNames={"#state": "state"},
                ExpressionAttributeValues={":started": {"S": "started"}},
            )

    async def drop_step(self, task_id: str, name: str, run: str) -> None:
        try:
            with translated(ConflictError):
                await self._client.call(
                    "delete_item",
                    TableName=self.table_name,
                    Key=self._step_key(task_id, name),
                    ConditionExpression="#state = :started AND #run = :run",
                    ExpressionAttributeNames={"#state": "state", "#run": "run"},
                    ExpressionAttributeValues={":started": {"S": "started"}, ":run": {"S": run}},
                )
        except ConflictError:  # finished, another run's, or gone: nothing of this run's to forget
            return


def _json(record: TaskRecord) -> str:
    return json.dumps(record.as_dict(), separators=(",", ":"))
