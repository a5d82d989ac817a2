"""The Lambda HTTP handler fed the files in `events/`: REST v1, HTTP API v2 and Function URL events."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mangum import Mangum

from lambda_mcp.config import Settings
from lambda_mcp.kit import build_kit
from lambda_mcp.loader import load_app
from lambda_mcp.local.context import LambdaContext
from tests.support.events import EVENTS, Handler, invoke, load_event
from tests.support.processes import ROOT
from tests.support.recorder import Recorder

SOURCES = ["http-api-v2", "rest-api-v1", "function-url"]


def _handler(**settings: Any) -> Handler:
    """What `lambda_mcp.entrypoints.http` builds, with these settings (no environment, no re-import)."""
    kit = build_kit(load_app(str(ROOT / "examples/conformance/server.py")), Settings(**settings), streaming=False)
    handler: Handler = Mangum(kit.asgi(), lifespan="off")
    return handler


@pytest.fixture(scope="module")
def handler() -> Iterator[Handler]:
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    yield _handler(state_key=b"event-test-key")
    asyncio.set_event_loop(None)
    loop.close()


@pytest.mark.parametrize("source", SOURCES)
def test_every_event_source_serves_both_eras_across_warm_invocations(handler: Handler, source: str) -> None:
    recorder = Recorder()
    status, headers, messages = invoke(handler, load_event(source, "initialize"), recorder)
    assert status == 200
    session = headers["mcp-session-id"]
    assert messages[0]["result"]["protocolVersion"] == "2025-11-25"

    status, _, messages = invoke(handler, load_event(source, "legacy_tools_call", session), recorder)
    assert status == 200
    assert messages[-1]["result"]["content"][0]["text"] == "This is a simple text response for testing."

    for _ in range(3):  # warm invocations of the same execution environment
        status, _, messages = invoke(handler, load_event(source, "modern_tools_call"), recorder)
        assert status == 200 and messages[-1]["result"]["resultType"] == "complete"
    status, _, messages = invoke(handler, load_event(source, "modern_server_discover"), recorder)
    assert messages[-1]["result"]["supportedVersions"][0] == "2026-07-28"

    status, _, _ = invoke(handler, load_event(source, "delete_session", session), recorder)
    assert status == 200
    status, _, _ = invoke(handler, load_event(source, "legacy_tools_call", session), recorder)
    assert status == 404
    assert recorder.violations == []


def test_a_foreign_host_is_refused_even_through_api_gateway(handler: Handler) -> None:
    event = load_event("http-api-v2", "modern_tools_call")
    event["headers"]["host"] = "evil.example.com"
    assert handler(event, LambdaContext())["statusCode"] == 403


def test_the_events_are_valid_json_for_sam_local_invoke() -> None:
    files = sorted(Path(EVENTS).glob("*/*.json"))
    assert len(files) == 22  # 5 per API flavour, 4 behind a JWT authorizer, 3 for the task worker
    for path in files:
        json.loads(path.read_text())


def test_a_session_answers_only_the_principal_that_started_it(handler: Handler) -> None:
    handler = _handler(state_key=b"event-test-key", auth="gateway")

    def as_user(event: dict[str, Any], sub: str) -> dict[str, Any]:
        claims = {"iss": "https://issuer.example.com", "sub": sub}
        event["requestContext"]["authorizer"] = {"jwt": {"claims": claims, "scopes": []}}
        return event

    started = handler(as_user(load_event("http-api-v2", "initialize"), "alice"), LambdaContext())
    session = {k.lower(): v for k, v in started["headers"].items()}["mcp-session-id"]
    call = load_event("http-api-v2", "legacy_tools_call", session)
    assert handler(as_user(json.loads(json.dumps(call)), "bob"), LambdaContext())["statusCode"] == 404
    assert handler(json.loads(json.dumps(call)), LambdaContext())["statusCode"] == 401  # no identity: fails closed
    assert handler(as_user(call, "alice"), LambdaContext())["statusCode"] == 200
