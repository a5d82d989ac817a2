"""The Lambda HTTP handler fed the files in `events/`: REST v1, HTTP API v2 and Function URL events."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from mangum import Mangum

from lambda_mcp.config import Settings
from lambda_mcp.kit import build_kit
from lambda_mcp.loader import load_app
from lambda_mcp.local.context import LambdaContext
from lambda_mcp.transport.app import create_app
from tests.support.processes import ROOT
from tests.support.recorder import Recorder

EVENTS = ROOT / "events"
SOURCES = ["http-api-v2", "rest-api-v1", "function-url"]
Handler = Callable[[dict[str, Any], Any], dict[str, Any]]


def _handler(**settings: Any) -> Handler:
    """What `lambda_mcp.entrypoints.http` builds, with these settings (no environment, no re-import)."""
    kit = build_kit(load_app(str(ROOT / "examples/conformance/server.py")), Settings(**settings), streaming=False)
    handler: Handler = Mangum(create_app(kit), lifespan="off")
    return handler


@pytest.fixture(scope="module")
def handler() -> Iterator[Handler]:
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    yield _handler(state_key=b"event-test-key")
    asyncio.set_event_loop(None)
    loop.close()


def _load(source: str, name: str, session: str | None = None) -> dict[str, Any]:
    text = (EVENTS / source / f"{name}.json").read_text()
    if session is not None:
        text = text.replace("REPLACE_WITH_SESSION_ID", session)
    event: dict[str, Any] = json.loads(text)
    return event


def _invoke(
    handler: Handler, event: dict[str, Any], recorder: Recorder
) -> tuple[int, dict[str, str], list[dict[str, Any]]]:
    response = handler(event, LambdaContext())
    headers = {k.lower(): str(v) for k, v in (response.get("headers") or {}).items()}
    body = (response.get("body") or "").encode()
    request_headers = {k.lower(): v for k, v in (event.get("headers") or {}).items()}
    messages = recorder.exchange(
        request_headers, (event.get("body") or "").encode(), response["statusCode"], headers, body
    )
    return response["statusCode"], headers, messages


@pytest.mark.parametrize("source", SOURCES)
def test_every_event_source_serves_both_eras_across_warm_invocations(handler: Handler, source: str) -> None:
    recorder = Recorder()
    status, headers, messages = _invoke(handler, _load(source, "initialize"), recorder)
    assert status == 200
    session = headers["mcp-session-id"]
    assert messages[0]["result"]["protocolVersion"] == "2025-11-25"

    status, _, messages = _invoke(handler, _load(source, "legacy_tools_call", session), recorder)
    assert status == 200
    assert messages[-1]["result"]["content"][0]["text"] == "This is a simple text response for testing."

    for _ in range(3):  # warm invocations of the same execution environment
        status, _, messages = _invoke(handler, _load(source, "modern_tools_call"), recorder)
        assert status == 200 and messages[-1]["result"]["resultType"] == "complete"
    status, _, messages = _invoke(handler, _load(source, "modern_server_discover"), recorder)
    assert messages[-1]["result"]["supportedVersions"][0] == "2026-07-28"

    status, _, _ = _invoke(handler, _load(source, "delete_session", session), recorder)
    assert status == 200
    status, _, _ = _invoke(handler, _load(source, "legacy_tools_call", session), recorder)
    assert status == 404
    assert recorder.violations == []


def test_a_foreign_host_is_refused_even_through_api_gateway(handler: Handler) -> None:
    event = _load("http-api-v2", "modern_tools_call")
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

    started = handler(as_user(_load("http-api-v2", "initialize"), "alice"), LambdaContext())
    session = {k.lower(): v for k, v in started["headers"].items()}["mcp-session-id"]
    call = _load("http-api-v2", "legacy_tools_call", session)
    assert handler(as_user(json.loads(json.dumps(call)), "bob"), LambdaContext())["statusCode"] == 404
    assert handler(json.loads(json.dumps(call)), LambdaContext())["statusCode"] == 401  # no identity: fails closed
    assert handler(as_user(call, "alice"), LambdaContext())["statusCode"] == 200
