"""Two kits (two Lambda instances) on one DynamoDB table over the wire: sessions are shared."""

from __future__ import annotations

from typing import Any

import pytest

from lambda_mcp.config import Settings
from lambda_mcp.kit import Stores, build_kit
from lambda_mcp.loader import load_app
from lambda_mcp.storage.dynamodb import DynamoDBEventLog, DynamoDBSessionStore, create_table
from tests.support.client import MCPTestClient
from tests.support.processes import ROOT

pytestmark = pytest.mark.anyio


def _instance(client: Any, table: str) -> MCPTestClient:
    app = load_app(str(ROOT / "examples/conformance/server.py"))
    kit = build_kit(
        app,
        Settings(state_key=b"shared", table_name=table),
        streaming=False,
        local=True,
        stores=Stores.dynamodb(table, client=client),
    )
    return MCPTestClient(kit)


@pytest.mark.parametrize("server", ["moto_server_url", "dynamodb_local_url"])
async def test_a_session_started_on_one_instance_is_served_and_ended_on_another(
    server: str, request: pytest.FixtureRequest
) -> None:
    import boto3

    client = boto3.client("dynamodb", region_name="us-east-1", endpoint_url=request.getfixturevalue(server))
    create_table(client, "shared-state")
    first, second = _instance(client, "shared-state"), _instance(client, "shared-state")
    try:
        await first.initialize()
        second.session_id, second.version = first.session_id, first.version
        assert (await second.legacy("logging/setLevel", {"level": "warning"})).result == {}
        listed = await second.legacy("tools/list")
        assert listed.status == 200 and listed.result["tools"]
        session = await first.kit.sessions.get(first.session_id or "", 0)
        assert session is not None and session.log_level == "warning"
        assert (await first.send("DELETE", b"", first.legacy_headers())).status == 200
        assert (await second.legacy("tools/list")).status == 404
        assert first.recorder.violations == [] and second.recorder.violations == []
    finally:
        await first.close()
        await second.close()
        client.delete_table(TableName="shared-state")


def test_the_kit_uses_dynamodb_when_a_table_is_configured() -> None:
    app = load_app(str(ROOT / "examples/conformance/server.py"))
    kit = build_kit(app, Settings(table_name="state"), streaming=False)
    assert isinstance(kit.sessions, DynamoDBSessionStore) and isinstance(kit.events, DynamoDBEventLog)
