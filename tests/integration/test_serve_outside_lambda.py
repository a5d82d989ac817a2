"""`lambda-mcp serve` outside Lambda (issue 34): it answers at its own banner URL (the loopback host and
port it is bound to) with no `LAMBDA_MCP_ALLOWED_HOSTS`, still refuses any other Host, and prints one
readable line per request as `lambda-mcp dev` does. Behind the Lambda Web Adapter nothing changes."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.support.polling import wait_until
from tests.support.processes import ROOT, ServerProcess, free_port

APP = str(ROOT / "examples/conformance/server.py")
MODERN = "2026-07-28"
LWA = {"AWS_LAMBDA_RUNTIME_API": "127.0.0.1:9001", "AWS_LAMBDA_EXEC_WRAPPER": "/opt/bootstrap"}


@pytest.fixture(autouse=True)
def outside_lambda(monkeypatch: pytest.MonkeyPatch) -> None:
    """No `LAMBDA_MCP_*`, Lambda or LWA variable reaches `serve` but those a test gives."""
    for name in [n for n in os.environ if n.startswith(("LAMBDA_MCP_", "AWS_LAMBDA_", "AWS_LWA_"))]:
        monkeypatch.delenv(name)


def serve(tmp_path: Path, name: str, host: str = "127.0.0.1", **env: str) -> ServerProcess:
    port = free_port()
    args = [sys.executable, "-m", "lambda_mcp", "serve", APP, "--host", host, "--port", str(port)]
    return ServerProcess(args, port, {"LAMBDA_MCP_AUTH": "none", **env}, log=tmp_path / f"{name}.log")


@pytest.fixture
def servers() -> Iterator[list[ServerProcess]]:
    started: list[ServerProcess] = []
    yield started
    for server in started:
        server.stop()


def list_tools(url: str, host: str | None = None) -> httpx.Response:
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": _meta()}}
    headers = {
        "accept": "application/json, text/event-stream",
        "mcp-protocol-version": MODERN,
        "mcp-method": "tools/list",
    }
    if host is not None:
        headers["host"] = host
    return httpx.post(url, json=body, headers=headers, timeout=30)


def _meta() -> dict[str, object]:
    return {"io.modelcontextprotocol/protocolVersion": MODERN, "io.modelcontextprotocol/clientCapabilities": {}}


def test_serve_answers_at_its_banner_url_and_logs_each_request(tmp_path: Path, servers: list[ServerProcess]) -> None:
    server = serve(tmp_path, "outside")
    servers.append(server)
    banner = wait_until(lambda: [x for x in server.log_text().splitlines() if "lambda-mcp serve:" in x], what="banner")
    assert server.url in banner[0] and "not behind the Lambda Web Adapter" in banner[0]
    assert list_tools(server.url).status_code == 200  # before: 403 Host not allowed
    assert list_tools(server.url, host=f"localhost:{server.port}").status_code == 200
    assert list_tools(server.url, host="evil.example").status_code == 403  # DNS rebinding protection stays

    def lines() -> list[str]:
        return [x for x in server.log_text().splitlines() if x.startswith("POST /mcp ")]

    found = wait_until(lambda: len(lines()) == 3 and lines(), what="three request lines")
    assert [x.split()[2:4] for x in found[:2]] == [["200", "tools/list"], ["200", "tools/list"]]
    assert found[2].split()[2] == "403"


def test_serve_on_every_interface_allows_the_loopback_names_at_its_port(
    tmp_path: Path, servers: list[ServerProcess]
) -> None:
    server = serve(tmp_path, "wildcard", host="0.0.0.0")
    servers.append(server)
    assert list_tools(server.url).status_code == 200
    assert list_tools(server.url, host=f"localhost:{server.port}").status_code == 200
    assert list_tools(server.url, host=f"127.0.0.1:{server.port + 1}").status_code == 403  # another port: not its own


def test_behind_the_adapter_nothing_changes(tmp_path: Path, servers: list[ServerProcess]) -> None:
    server = serve(tmp_path, "behind", **LWA, AWS_LWA_INVOKE_MODE="response_stream")
    servers.append(server)
    assert list_tools(server.url).status_code == 403  # LWA forwards the API's Host; a loopback one is no API's
    assert not [x for x in server.log_text().splitlines() if x.startswith("POST /mcp")]  # CloudWatch: no lines
