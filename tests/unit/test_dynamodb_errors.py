"""DynamoDB adapters turn botocore errors into kit storage errors and build no client at import."""

from __future__ import annotations

import subprocess
import sys

import boto3
import pytest
from botocore.stub import Stubber

from lambda_mcp.storage import NotFoundError, StorageError
from lambda_mcp.storage.dynamodb import DynamoDBSessionStore

pytestmark = pytest.mark.anyio


def _stubbed() -> tuple[DynamoDBSessionStore, Stubber]:
    client = boto3.client("dynamodb", region_name="us-east-1")
    return DynamoDBSessionStore("state", client=client), Stubber(client)


async def test_throttling_is_a_storage_error_never_not_found() -> None:
    store, stubber = _stubbed()
    stubber.add_client_error("get_item", "ProvisionedThroughputExceededException", "slow down")
    with stubber, pytest.raises(StorageError) as caught:
        await store.get("s1", 0)
    assert not isinstance(caught.value, NotFoundError)
    assert "ProvisionedThroughputExceededException" in str(caught.value)
    stubber.assert_no_pending_responses()


async def test_a_lost_condition_on_a_session_change_is_not_found() -> None:
    store, stubber = _stubbed()
    stubber.add_client_error("update_item", "ConditionalCheckFailedException", "no")
    with stubber, pytest.raises(NotFoundError):
        await store.set_log_level("s1", "info")


def test_importing_the_adapters_builds_no_client_and_the_kit_never_imports_boto3() -> None:
    code = (
        "import sys, lambda_mcp.kit, lambda_mcp.transport.app;"
        "assert 'boto3' not in sys.modules;"
        "import lambda_mcp.storage.dynamodb as d;"
        "import botocore.client as c; made = [];"
        "c.BaseClient.__init__ = lambda *a, **k: made.append(1);"
        "d.DynamoDBSessionStore('t'); d.DynamoDBEventLog('t');"
        "assert made == [], made"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
