"""`lambda-mcp dev --lambda` puts the TCP peer in the event's `sourceIp` on every front door, so that the function
(and Mangum's ASGI `client`, which the facade counts its per-address limits by) sees who called, as in AWS.

The dev server's own HTTP side (`local.apigw.listen`: its request handler builds the `Call` from the socket) and
invoker (`_Invoker`: a Lambda handler on its own thread and loop) serve a handler that echoes what it was given:
the kit's handler shows no caller address, so the subprocess would have nothing to observe. Clients bind other
loopback addresses (Linux routes all of 127.0.0.0/8 to lo) to be a different peer than the server's 127.0.0.1."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from lambda_mcp.local import apigw
from lambda_mcp.local.gateways import API_TYPES, ApiType, Call, Gateway, http_api_event, rest_api_event
from tests.support.processes import free_port

PATHS = {"http": "/mcp", "rest": "/v1/mcp", "url": "/mcp"}


@pytest.fixture(scope="module")
def invoke() -> Iterator[Any]:
    invoker = apigw._Invoker("tests.apps.peer")
    yield invoker.invoke
    invoker._pool.shutdown()


def _serve(api: ApiType, invoke: Any) -> tuple[str, Any]:
    port = free_port()
    server = apigw.listen(Gateway(api, invoke), "127.0.0.1", port)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()

    def stop() -> None:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)

    return f"http://127.0.0.1:{port}", stop


def _seen(url: str, source: str | None) -> dict[str, Any]:
    """What the handler saw of a POST to `url` from `source` (None: the client's default, 127.0.0.1)."""
    transport = httpx.HTTPTransport(local_address=source) if source else httpx.HTTPTransport()
    with httpx.Client(transport=transport, timeout=10) as client:
        response = client.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "ping"})
    assert response.status_code == 200, response.text
    seen: dict[str, Any] = response.json()
    return seen


@pytest.mark.parametrize("api", API_TYPES)
def test_the_handler_sees_the_tcp_peer_as_the_source_ip(api: ApiType, invoke: Any) -> None:
    base, stop = _serve(api, invoke)
    try:
        for source in ("127.0.0.2", "127.0.0.3", None):  # one server, each connection its own peer
            seen = _seen(base + PATHS[api], source)
            expected = source or "127.0.0.1"
            assert seen["sourceIp"] == expected and seen["client"] == expected, (api, source, seen)
            assert seen["path"] == "/mcp"  # the REST stage taken off, as API Gateway does
    finally:
        stop()


def test_the_rest_api_routes_the_facade_revocation_endpoint(invoke: Any) -> None:
    """template.yaml routes /oauth/{proxy+} to the function; the REST emulation lists the facade's endpoints, with
    RFC 7009 revocation at /oauth/revoke among them."""
    base, stop = _serve("rest", invoke)
    try:
        assert _seen(base + "/v1/oauth/revoke", "127.0.0.2") == {
            "client": "127.0.0.2",
            "sourceIp": "127.0.0.2",
            "path": "/oauth/revoke",
        }
        with httpx.Client(timeout=10) as client:  # outside the routes API Gateway answers, not the function
            assert client.post(base + "/v1/elsewhere").status_code == 403
    finally:
        stop()


def test_events_built_without_a_peer_come_from_loopback() -> None:
    call = Call("POST", "/mcp", {}, b"", "localhost")
    assert http_api_event("POST", "/mcp", {}, b"", "localhost")["requestContext"]["http"]["sourceIp"] == "127.0.0.1"
    assert rest_api_event(call, "/mcp", None)["requestContext"]["identity"]["sourceIp"] == "127.0.0.1"
    peer = Call("POST", "/v1/mcp", {}, b"", "localhost", source_ip="192.0.2.7")
    assert rest_api_event(peer, "/mcp", None)["requestContext"]["identity"]["sourceIp"] == "192.0.2.7"
    event = http_api_event("POST", "/mcp", {}, b"", "localhost", "192.0.2.7")
    assert event["requestContext"]["http"]["sourceIp"] == "192.0.2.7"
