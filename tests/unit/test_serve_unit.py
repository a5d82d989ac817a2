"""`lambda-mcp serve`'s parts that need no server (issue 27): the run script's copies, where it listens,
when it trusts LWA's headers, and what `FromAdapter` puts in the ASGI scope."""

from __future__ import annotations

import json
import os
import stat
import time
import zipfile
from pathlib import Path
from typing import Any

import pytest

from lambda_mcp.config import ConfigError
from lambda_mcp.scaffold import create_project
from lambda_mcp.scaffold.kit import write_running_wheel
from lambda_mcp.serving import FromAdapter, behind_adapter, listen_address
from lambda_mcp.transport import sse
from lambda_mcp.transport.deadline import SAFETY_SECONDS, stream_deadline

ROOT = Path(__file__).resolve().parents[2]
SCAFFOLD_RUN = ROOT / "src/lambda_mcp/scaffold/project/app/run.sh"
EXAMPLE_RUN = ROOT / "examples/weather/run.sh"
LWA = {"AWS_LAMBDA_RUNTIME_API": "127.0.0.1:9001", "AWS_LAMBDA_EXEC_WRAPPER": "/opt/bootstrap"}


def test_the_run_script_copies_are_identical_executable_posix_sh_with_lf_endings() -> None:
    text = SCAFFOLD_RUN.read_bytes()
    assert EXAMPLE_RUN.read_bytes() == text
    assert text.startswith(b"#!/bin/sh\n") and b"\r" not in text
    assert b"exec python3 -m lambda_mcp serve" in text
    for path in (SCAFFOLD_RUN, EXAMPLE_RUN):
        assert os.stat(path).st_mode & 0o111 == 0o111, f"{path} is not executable"


def test_a_new_project_and_the_kits_wheel_keep_the_run_script_executable(tmp_path: Path) -> None:
    project = create_project("demo", tmp_path)
    run = project / "app/run.sh"
    assert run.read_bytes() == SCAFFOLD_RUN.read_bytes()
    assert os.stat(run).st_mode & 0o111 == 0o111
    wheel = tmp_path / "kit.whl"
    write_running_wheel(wheel)
    with zipfile.ZipFile(wheel) as archive:
        modes = {i.filename: stat.S_IMODE(i.external_attr >> 16) for i in archive.infolist()}
    assert modes["lambda_mcp/scaffold/project/app/run.sh"] == 0o755
    assert modes["lambda_mcp/serving.py"] == 0o644


def test_serve_listens_where_lwa_connects() -> None:
    assert listen_address(None, None, {}) == ("127.0.0.1", 8080)
    assert listen_address(None, None, {"PORT": "9000"}) == ("127.0.0.1", 9000)
    assert listen_address(None, None, {"PORT": "9000", "AWS_LWA_PORT": "9100", "AWS_LWA_HOST": "::1"}) == ("::1", 9100)
    assert listen_address("0.0.0.0", 7000, {"PORT": "9000"}) == ("0.0.0.0", 7000)
    with pytest.raises(ConfigError, match="PORT must be a port number"):
        listen_address(None, None, {"PORT": "eighty"})


def test_lwas_headers_are_trusted_only_inside_a_lambda_runtime_process_started_by_a_wrapper() -> None:
    assert behind_adapter(LWA)
    assert not behind_adapter({})
    assert not behind_adapter({"AWS_LAMBDA_EXEC_WRAPPER": "/opt/bootstrap"})  # a laptop with the template's env
    assert not behind_adapter({"AWS_LAMBDA_RUNTIME_API": "127.0.0.1:9001"})  # the buffered function
    assert not behind_adapter({**LWA, "LAMBDA_MCP_BEHIND_ADAPTER": "false"})


def _scope(*headers: tuple[str, str]) -> dict[str, Any]:
    return {
        "type": "http",
        "method": "POST",
        "path": "/mcp",
        "headers": [(k.encode(), v.encode()) for k, v in headers],
    }


CONTEXT = {"httpMethod": "POST", "path": "/v1/mcp", "authorizer": {"principalId": "alice"}, "domainName": "x.example"}


def test_from_adapter_puts_the_request_context_and_the_deadline_in_the_scope_only_when_trusted() -> None:
    deadline = time.time() * 1000 + 60_000
    headers = (
        ("x-amzn-request-context", json.dumps(CONTEXT)),
        ("x-amzn-lambda-context", json.dumps({"deadline": deadline})),
    )
    trusted = FromAdapter(lambda *a: None, trusted=True, function_timeout=None, readiness="/healthz")  # type: ignore[arg-type,return-value]
    scope = trusted.with_invocation(_scope(*headers))
    assert scope["aws.event"] == {"requestContext": CONTEXT, "httpMethod": "POST"}
    until = stream_deadline(scope)
    assert until is not None and abs(until - (deadline / 1000 - SAFETY_SECONDS)) < 1
    untrusted = FromAdapter(lambda *a: None, trusted=False, function_timeout=None, readiness="/healthz")  # type: ignore[arg-type,return-value]
    assert untrusted.with_invocation(_scope(*headers)) == _scope(*headers)
    # two copies (which LWA never forwards: it replaces the client's) or a pass-through event's null: no event
    twice = _scope(headers[0], headers[0])
    assert "aws.event" not in trusted.with_invocation(twice)
    assert "aws.event" not in trusted.with_invocation(_scope(("x-amzn-request-context", "null")))


def test_without_lwas_deadline_a_function_timeout_bounds_streams_and_dev_has_none() -> None:
    timed = FromAdapter(lambda *a: None, trusted=False, function_timeout=30, readiness="/healthz")  # type: ignore[arg-type,return-value]
    until = stream_deadline(timed.with_invocation(_scope()))
    assert until is not None and abs(until - (time.time() + 30 - SAFETY_SECONDS)) < 1
    assert stream_deadline(_scope()) is None


def test_the_keep_alive_interval_comes_from_the_environment() -> None:
    assert sse.keep_alive_seconds({}) == 15
    assert sse.keep_alive_seconds({"LAMBDA_MCP_KEEP_ALIVE_SECONDS": "30"}) == 30
    with pytest.raises(ConfigError, match="LAMBDA_MCP_KEEP_ALIVE_SECONDS"):
        sse.keep_alive_seconds({"LAMBDA_MCP_KEEP_ALIVE_SECONDS": "0"})


def test_a_readiness_path_of_its_own_is_answered_by_the_apps_health_check() -> None:
    import asyncio

    seen: list[str] = []

    async def app(scope: Any, receive: Any, send: Any) -> None:
        seen.append(scope["path"])

    ready = FromAdapter(app, trusted=False, function_timeout=None, readiness="/ready")
    for path in ("/ready", "/healthz", "/mcp"):
        asyncio.run(ready({**_scope(), "path": path, "method": "GET"}, None, None))  # type: ignore[arg-type]
    asyncio.run(ready({**_scope(), "path": "/ready", "method": "POST"}, None, None))  # type: ignore[arg-type]
    assert seen == ["/healthz", "/healthz", "/mcp", "/ready"]
