"""The state table's definition (the SAM template must declare the same keys) and a local create helper."""

from __future__ import annotations

from typing import Any

from . import keys

TABLE_DEFINITION: dict[str, Any] = {
    "AttributeDefinitions": [
        {"AttributeName": keys.PK, "AttributeType": "S"},
        {"AttributeName": keys.SK, "AttributeType": "S"},
    ],
    "KeySchema": [
        {"AttributeName": keys.PK, "KeyType": "HASH"},
        {"AttributeName": keys.SK, "KeyType": "RANGE"},
    ],
    "BillingMode": "PAY_PER_REQUEST",
}


def create_table(client: Any, table_name: str) -> None:
    """Create the table with TTL on `expires_at` if it does not exist (local backends and tests)."""
    existing = client.list_tables().get("TableNames", [])
    if table_name not in existing:
        client.create_table(TableName=table_name, **TABLE_DEFINITION)
        client.get_waiter("table_exists").wait(TableName=table_name, WaiterConfig={"Delay": 0.2, "MaxAttempts": 50})
    if _ttl_disabled(client, table_name):
        spec = {"Enabled": True, "AttributeName": keys.EXPIRES_AT}
        client.update_time_to_live(TableName=table_name, TimeToLiveSpecification=spec)


def _ttl_disabled(client: Any, table_name: str) -> bool:
    status = client.describe_time_to_live(TableName=table_name).get("TimeToLiveDescription", {})
    return status.get("TimeToLiveStatus") not in ("ENABLED", "ENABLING")
