"""Storage calls per request, counted on the DynamoDB client (moto in-process stands in for the table).

Modern (2026-07-28) requests are stateless: 0 calls. A legacy request reads its session once, and
writes only when the session's sliding expiry is due (at most once per `session_touch_seconds`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from moto import mock_aws

from lambda_mcp.config import Settings
from lambda_mcp.kit import Stores, build_kit
from lambda_mcp.loader import load_app
from lambda_mcp.storage.dynamodb import create_table
from tests.support.client import MCPTestClient
from tests.support.polling import after, wait_until
from tests.support.processes import ROOT

pytestmark = pytest.mark.anyio
TABLE = "counted"


class Calls:
    """Counts DynamoDB API operations made through one boto3 client."""

    def __init__(self, client: Any) -> None:
        self.seen: Counter[str] = Counter()
        client.meta.events.register("before-call.dynamodb.*", self._count)

    def _count(self, model: Any, **_: Any) -> None:
        self.seen[model.name] += 1

    def take(self) -> dict[str, int]:
        taken = dict(self.seen)
        self.seen.clear()
        return taken


@pytest.fixture
def dynamodb() -> Iterator[tuple[Any, Calls]]:
    with mock_aws():
        client = boto3.client("dynamodb", region_name="us-east-1")
        create_table(client, TABLE)
        yield client, Calls(client)


def _client(dynamodb: tuple[Any, Calls], touch_seconds: float) -> MCPTestClient:
    client, _ = dynamodb
    settings = Settings(state_key=b"k", table_name=TABLE, session_touch_seconds=touch_seconds)
    kit = build_kit(
        load_app(str(ROOT / "examples/conformance/server.py")),
        settings,
        streaming=False,
        local=True,
        stores=Stores.dynamodb(TABLE, client=client),
    )
    return MCPTestClient(kit)


async def test_modern_requests_make_no_storage_calls(dynamodb: tuple[Any, Calls]) -> None:
    mcp, calls = _client(dynamodb, 300), dynamodb[1]
    try:
        requests: list[tuple[str, dict[str, Any]]] = [
            ("server/discover", {}),
            ("tools/list", {}),
            ("tools/call", {"name": "test_simple_text", "arguments": {}}),
            ("tools/call", {"name": "test_tool_with_logging", "arguments": {}}),
            ("resources/read", {"uri": "test://static-text"}),
            ("prompts/get", {"name": "test_simple_prompt"}),
        ]
        for method, params in requests:
            exchange = await mcp.modern(method, params)
            assert exchange.status == 200 and "result" in exchange.body, exchange.body
            assert calls.take() == {}, method
        assert mcp.recorder.violations == []
    finally:
        await mcp.close()


async def test_a_legacy_request_reads_its_session_once_and_touches_it_rarely(dynamodb: tuple[Any, Calls]) -> None:
    mcp, calls = _client(dynamodb, 0.5), dynamodb[1]
    try:
        await mcp.initialize()
        assert calls.take() == {"PutItem": 1}
        for method, params in [
            ("tools/list", None),
            ("tools/call", {"name": "test_simple_text", "arguments": {}}),
            ("tools/call", {"name": "test_tool_with_logging", "arguments": {}}),
            ("ping", None),
        ]:
            exchange = await mcp.legacy(method, params)
            assert exchange.status == 200, exchange.body
            assert calls.take() == {"GetItem": 1}, method
        wait_until(after(0.6), what="the touch interval to pass")  # the next request slides the expiry, once
        await mcp.legacy("tools/list")
        assert calls.take() == {"GetItem": 1, "UpdateItem": 1}
        await mcp.legacy("tools/list")
        assert calls.take() == {"GetItem": 1}
        assert mcp.recorder.violations == []
    finally:
        await mcp.close()
