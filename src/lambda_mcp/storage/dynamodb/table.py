"""The state table's definition (the SAM template must declare the same keys) and a local create helper."""

from __future__ import annotations

import time
from typing import Any

from . import keys

TABLE_DEFINITION: dict[str, Any] = {
    "AttributeDefinitions": [
        {"AttributeName": keys.PK, "AttributeType": "S"},
        {"AttributeName": keys.SK, "AttributeType": "S"},
        {"AttributeName": keys.OWNER_PK, "AttributeType": "S"},
        {"AttributeName": keys.CREATED_SK, "AttributeType": "S"},
        {"AttributeName": keys.DUE_PK, "AttributeType": "S"},
        {"AttributeName": keys.DUE_SK, "AttributeType": "S"},
    ],
    "KeySchema": [
        {"AttributeName": keys.PK, "KeyType": "HASH"},
        {"AttributeName": keys.SK, "KeyType": "RANGE"},
    ],
    "GlobalSecondaryIndexes": [
        {
            "IndexName": keys.BY_OWNER_INDEX,
            "KeySchema": [
                {"AttributeName": keys.OWNER_PK, "KeyType": "HASH"},
                {"AttributeName": keys.CREATED_SK, "KeyType": "RANGE"},
            ],
            # what tasks/list shows, not the arguments or results (up to 400 KB a task)
            "Projection": {"ProjectionType": "INCLUDE", "NonKeyAttributes": ["listing", keys.EXPIRES_AT]},
        },
        {
            "IndexName": keys.BY_DUE_INDEX,
            "KeySchema": [
                {"AttributeName": keys.DUE_PK, "KeyType": "HASH"},
                {"AttributeName": keys.DUE_SK, "KeyType": "RANGE"},
            ],
            "Projection": {"ProjectionType": "KEYS_ONLY"},
        },
    ],
    "BillingMode": "PAY_PER_REQUEST",
}


def create_table(client: Any, table_name: str) -> None:
    """Create the table with TTL on `expires_at` if it does not exist (local backends and tests)."""
    existing = client.list_tables().get("TableNames", [])
    if table_name not in existing:
        client.create_table(TableName=table_name, **TABLE_DEFINITION)
        client.get_waiter("table_exists").wait(TableName=table_name, WaiterConfig={"Delay": 0.2, "MaxAttempts": 50})
    else:
        _add_missing_indexes(client, table_name)
    if _ttl_disabled(client, table_name):
        spec = {"Enabled": True, "AttributeName": keys.EXPIRES_AT}
        client.update_time_to_live(TableName=table_name, TimeToLiveSpecification=spec)


def _add_missing_indexes(client: Any, table_name: str) -> None:
    """Bring a table made by an older kit up to date (a local data directory outlives upgrades)."""
    present = {
        i["IndexName"] for i in client.describe_table(TableName=table_name)["Table"].get("GlobalSecondaryIndexes", [])
    }
    for index in TABLE_DEFINITION["GlobalSecondaryIndexes"]:
        if index["IndexName"] in present:
            continue
        client.update_table(
            TableName=table_name,
            AttributeDefinitions=TABLE_DEFINITION["AttributeDefinitions"],
            GlobalSecondaryIndexUpdates=[{"Create": index}],
        )
        for _ in range(100):
            found = client.describe_table(TableName=table_name)["Table"].get("GlobalSecondaryIndexes", [])
            if any(i["IndexName"] == index["IndexName"] and i.get("IndexStatus") == "ACTIVE" for i in found):
                break
            time.sleep(0.2)


def _ttl_disabled(client: Any, table_name: str) -> bool:
    status = client.describe_time_to_live(TableName=table_name).get("TimeToLiveDescription", {})
    return status.get("TimeToLiveStatus") not in ("ENABLED", "ENABLING")
