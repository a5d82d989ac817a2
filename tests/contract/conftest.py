"""Storage backends for the contract suites: in-memory, moto in-process, moto server and DynamoDB Local.

The wire backends are real HTTP endpoints on 127.0.0.1 (fixtures in tests/conftest.py): moto's
threaded server, and Amazon DynamoDB Local running on the machine's Java. Each test gets a fresh table.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from lambda_mcp.storage import (
    CallStore,
    ChangeLog,
    EventLog,
    InMemoryCallStore,
    InMemoryChangeLog,
    InMemoryEventLog,
    InMemorySessionStore,
    SessionStore,
)
from lambda_mcp.tasks import InMemoryTaskStore, TaskStore

BACKENDS = ["memory", "moto", "moto-server", "dynamodb-local"]


def _client(endpoint: str | None) -> Any:
    import boto3

    return boto3.client("dynamodb", region_name="us-east-1", endpoint_url=endpoint)


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> Iterator[tuple[str, Any]]:
    """(name, DynamoDB client or None for memory) with a fresh table named in `client.table_name`."""
    name: str = request.param
    if name == "memory":
        yield name, None
        return
    from lambda_mcp.storage.dynamodb import create_table

    if name == "moto":
        from moto import mock_aws

        with mock_aws():
            client = _client(None)
            table = f"state-{secrets.token_hex(4)}"
            create_table(client, table)
            yield name, (client, table)
        return
    url = request.getfixturevalue("moto_server_url" if name == "moto-server" else "dynamodb_local_url")
    client = _client(url)
    table = f"state-{secrets.token_hex(4)}"
    create_table(client, table)
    yield name, (client, table)
    client.delete_table(TableName=table)


def _adapter(backend: tuple[str, Any], in_memory: Callable[[], Any], dynamodb_class: str) -> Any:
    """The port's in-memory adapter, or its DynamoDB adapter on the backend's fresh table."""
    if backend[1] is None:
        return in_memory()
    from lambda_mcp.storage import dynamodb

    client, table = backend[1]
    return getattr(dynamodb, dynamodb_class)(table, client=client)


@pytest.fixture
def session_store(backend: tuple[str, Any]) -> SessionStore:
    store: SessionStore = _adapter(backend, InMemorySessionStore, "DynamoDBSessionStore")
    return store


@pytest.fixture
def event_log(backend: tuple[str, Any]) -> EventLog:
    log: EventLog = _adapter(backend, InMemoryEventLog, "DynamoDBEventLog")
    return log


@pytest.fixture
def task_store(backend: tuple[str, Any]) -> TaskStore:
    store: TaskStore = _adapter(backend, InMemoryTaskStore, "DynamoDBTaskStore")
    return store


@pytest.fixture
def call_store(backend: tuple[str, Any]) -> CallStore:
    store: CallStore = _adapter(backend, InMemoryCallStore, "DynamoDBCallStore")
    return store


@pytest.fixture
def change_log(backend: tuple[str, Any]) -> ChangeLog:
    log: ChangeLog = _adapter(backend, InMemoryChangeLog, "DynamoDBChangeLog")
    return log
