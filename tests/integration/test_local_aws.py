"""`lambda-mcp dev --aws local`: the kit starts a local AWS API, makes the table, and state outlives the server."""

from __future__ import annotations

import re
import socket
from pathlib import Path

import boto3
import httpx
import pytest

from lambda_mcp.local import aws
from tests.support.processes import lambda_mcp_dev

APP = "examples/conformance/server.py"
HEADERS = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
}


def _endpoint_in(log: str) -> str:
    found = re.search(r"on (dynamodb-local|moto) at (http://127\.0\.0\.1:\d+)", log)
    assert found, log
    return found.group(2)


def _listening(url: str) -> bool:
    port = int(url.rsplit(":", 1)[1])
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return True
    except OSError:
        return False


def test_state_survives_a_restart_of_the_dev_server(tmp_path: Path) -> None:
    data = tmp_path / "dynamodb"
    first = lambda_mcp_dev(APP, through_lambda=True, aws_data_dir=data, log=tmp_path / "first.log")
    try:
        endpoint = _endpoint_in(first.output())
        assert "on dynamodb-local" in first.output()
        started = httpx.post(first.url, json=INITIALIZE, headers=HEADERS)
        assert started.status_code == 200
        session_id = started.headers["mcp-session-id"]
    finally:
        first.stop()
    assert not _listening(endpoint), "the dev server must stop the DynamoDB Local it started"

    # the same data directory, now behind the streaming (uvicorn) dev server
    second = lambda_mcp_dev(APP, through_lambda=False, aws_data_dir=data, log=tmp_path / "second.log")
    try:
        listed = httpx.post(
            second.url,
            json={"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
            headers={**HEADERS, "mcp-session-id": session_id, "mcp-protocol-version": "2025-11-25"},
        )
        assert listed.status_code == 200, listed.text
        assert listed.json()["result"]["tools"]
        unknown = httpx.post(
            second.url,
            json={"jsonrpc": "2.0", "id": 3, "method": "tools/list"},
            headers={**HEADERS, "mcp-session-id": "not-a-session", "mcp-protocol-version": "2025-11-25"},
        )
        assert unknown.status_code == 404
    finally:
        second.stop()


def test_without_java_the_kit_falls_back_to_moto_server(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("AWS_ENDPOINT_URL_DYNAMODB", "LAMBDA_MCP_TABLE_NAME"):  # configure() sets them: undo after
        monkeypatch.setenv(name, "")  # records the original (or its absence) for monkeypatch to restore
        monkeypatch.delenv(name)
    local = aws.start(None, engine="moto")
    try:
        assert local.engine == "moto" and _listening(local.endpoint)
        table = aws.configure(local.endpoint, "fallback-state")
        client = boto3.client("dynamodb", region_name="us-east-1", endpoint_url=local.endpoint)
        described = client.describe_table(TableName=table)["Table"]
        assert described["KeySchema"][0]["AttributeName"] == "pk"
        ttl = client.describe_time_to_live(TableName=table)["TimeToLiveDescription"]
        assert ttl["AttributeName"] == "expires_at"
    finally:
        local.stop()
    assert not _listening(local.endpoint)


def test_an_unreachable_endpoint_is_a_clear_error(capsys: pytest.CaptureFixture[str]) -> None:
    from lambda_mcp import cli
    from tests.support.processes import free_port

    dead = f"http://127.0.0.1:{free_port()}"
    assert cli.main(["dev", APP, "--aws-endpoint", dead]) == 2
    assert f"{dead} did not answer" in capsys.readouterr().err
