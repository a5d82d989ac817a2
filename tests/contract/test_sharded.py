"""The change feed and the due index spread over shards (issue 14): every reader still sees every entry once,
in order, page after page, on every DynamoDB backend."""

from __future__ import annotations

import time
from typing import Any

import pytest

from lambda_mcp.protocol.ids import change_cursor
from lambda_mcp.storage.dynamodb import DynamoDBChangeLog, DynamoDBTaskStore, keys
from lambda_mcp.tasks import TaskRecord, new_task_id

# sharding is a DynamoDB layout: these run on the DynamoDB backends only (memory has no partitions)
pytestmark = [
    pytest.mark.anyio,
    pytest.mark.parametrize("backend", ["moto", "moto-server", "dynamodb-local"], indirect=True),
]
SHARDS = 3
NOW = 1_800_000_000.0


@pytest.fixture
def dynamodb(backend: tuple[str, Any]) -> tuple[Any, str]:
    client, table = backend[1]
    return client, table


def _partitions(client: Any, table: str, attribute: str) -> set[str]:
    items = client.scan(TableName=table)["Items"]
    return {item[attribute]["S"] for item in items if attribute in item}


async def test_a_sharded_change_feed_reads_every_change_once_in_order(dynamodb: tuple[Any, str]) -> None:
    client, table = dynamodb
    log = DynamoDBChangeLog(table, client=client, shards=SHARDS)
    now = time.time()
    published = [(await log.publish("resource", f"test://{n}", now + n * 0.001)).cursor for n in range(40)]
    assert len({pk for pk in _partitions(client, table, "pk") if pk.startswith("CHANGES")}) > 1
    seen: list[str] = []
    cursor = change_cursor(now - 1)
    for _ in range(20):
        page = await log.since(cursor, time.time(), limit=7)
        if not page:
            break
        assert len(page) <= 7
        seen += [change.cursor for change in page]
        cursor = page[-1].cursor
    assert seen == published


async def test_a_sharded_due_index_lists_every_due_task_most_overdue_first(dynamodb: tuple[Any, str]) -> None:
    client, table = dynamodb
    store = DynamoDBTaskStore(table, client=client, shards=SHARDS)
    due = []
    for index in range(25):
        task = TaskRecord(
            task_id=new_task_id(),
            owner="principal:shards",
            method="tools/call",
            params={},
            created_at=NOW,
            updated_at=NOW,
            expires_at=NOW + 3600,
            ttl_ms=3_600_000,
            poll_interval_ms=500,
            due_at=NOW - 100 + index,
        )
        await store.create(task)
        due.append(task.task_id)
    assert len(_partitions(client, table, keys.DUE_PK)) == SHARDS
    listed: list[str] = []
    for _ in range(5):
        page = await store.list_due(NOW, limit=10)
        assert len(page) <= 10
        listed += page
        for task_id in page:
            await store.drop_due(task_id)
    assert listed == due  # most overdue first across the shards, each once
