"""Client ID Metadata Documents: the SSRF guards of the fetch, and CIMD clients at /oauth/authorize."""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from typing import Any

import httpx
import pytest

from lambda_mcp.facade import cimd
from lambda_mcp.facade.cimd import DocumentError, check_url, fetch_document
from lambda_mcp.kit import Stores, build_kit
from lambda_mcp.loader import load_app
from tests.support.loopback import LoopbackServer
from tests.unit.test_facade_http import BASE, REDIRECT, FakeUpstream, Rig, query, settings

pytestmark = pytest.mark.anyio


class Documents:
    """A loopback server answering `/client.json` with a metadata document, `/moved` with a redirect,
    `/big` with too much; it counts the requests."""

    def __init__(self) -> None:
        self.server = LoopbackServer(self._handle)
        self.url = self.server.url
        self.reset()

    def reset(self) -> None:
        self.requests = 0
        self.document: dict[str, Any] = {
            "client_id": self.url + "/client.json",
            "client_name": "Documented Client",
            "redirect_uris": [REDIRECT],
            "token_endpoint_auth_method": "none",
        }

    def _handle(self, handler: BaseHTTPRequestHandler) -> None:
        self.requests += 1
        if handler.path == "/moved":
            handler.send_response(302)
            handler.send_header("Location", "/client.json")
            handler.end_headers()
            return
        if handler.path == "/slow":  # a byte every 0.15 s: each read is quick, the whole is not
            handler.send_response(200)
            handler.end_headers()
            for _ in range(8):
                handler.wfile.write(b" ")
                handler.wfile.flush()
                time.sleep(0.15)
            return
        body = b"{" + b" " * 20_000 + b"}" if handler.path == "/big" else json.dumps(self.document).encode()
        handler.send_response(200)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Cache-Control", "max-age=600")
        handler.end_headers()
        handler.wfile.write(body)


@pytest.fixture(scope="module")
def served() -> Iterator[Documents]:
    server = Documents()
    yield server
    server.server.stop()


@pytest.fixture
def documents(served: Documents) -> Documents:
    served.reset()
    return served


PUBLIC = "the client's metadata document could not be used"


def refused(url: str, allow_loopback: bool, **kwargs: Any) -> str:
    """Fetch `url`, which must be refused with the one public text; return the refusal's detail (for the log)."""
    with pytest.raises(DocumentError) as caught:
        fetch_document(url, allow_loopback, **kwargs)
    assert caught.value.public == PUBLIC
    return caught.value.detail


@pytest.mark.parametrize(
    "url",
    [
        "http://example.com/client.json",  # not https
        "https://example.com",  # no path
        "https://example.com/",
        "https://example.com/c.json#x",
        "https://user:pw@example.com/c.json",
        "https://example.com/a/../c.json",
        "https://127.0.0.1/c.json",  # loopback, not allowed here
        "http://localhost:8000/c.json",
        "https://example.com/c.json?v=1",  # a query string
        "https://example.com/c.json?",
        "https://example.com:8443/c.json",  # a port other than 443
        "https://example.com:80/c.json",
        "https://example.com:0/c.json",
        "https://[2606:4700::1111]:444/c.json",
    ],
)
def test_urls_that_cannot_be_client_ids_are_refused(url: str) -> None:
    with pytest.raises(DocumentError) as caught:
        check_url(url, allow_loopback=False)
    assert caught.value.public == PUBLIC and caught.value.detail == str(caught.value)


@pytest.mark.parametrize(
    ("url", "allow_loopback"),
    [
        ("https://example.com/c.json", False),
        ("https://example.com:443/c.json", False),  # the one port, written out
        ("https://[2606:4700::1111]:443/c.json", False),
        ("http://127.0.0.1:8000/c.json", True),  # local work and tests: loopback on any port
        ("https://127.0.0.1:8443/c.json", True),
        ("http://[::1]:8000/c.json", True),
        ("http://localhost:8000/c.json", True),
    ],
)
def test_client_id_urls_on_port_443_or_local_loopback_are_accepted(url: str, allow_loopback: bool) -> None:
    check_url(url, allow_loopback)


@pytest.mark.parametrize(
    "url",
    [
        "https://example.com:8443/c.json",  # the loopback allowance relaxes the port for loopback only
        "https://127.0.0.1:0/c.json",
        "http://127.0.0.1:8000/c.json?v=1",
    ],
)
def test_the_loopback_allowance_relaxes_nothing_else(url: str) -> None:
    with pytest.raises(DocumentError):
        check_url(url, allow_loopback=True)


def test_a_query_string_is_refused_before_anything_is_fetched(documents: Documents) -> None:
    detail = refused(documents.url + "/client.json?v=1", allow_loopback=True)
    assert "query string" in detail and documents.requests == 0


def test_the_whole_fetch_is_given_two_seconds(monkeypatch: pytest.MonkeyPatch) -> None:
    given: list[float] = []

    def resolve(host: str, port: int, timeout: float) -> list[Any]:
        given.append(timeout)
        return []

    monkeypatch.setattr(cimd, "_resolve", resolve)
    assert "does not resolve" in refused("https://client.example/meta.json", allow_loopback=False)
    assert given == [2.0]


@pytest.mark.parametrize(
    "address",
    [
        "10.0.0.5",
        "172.16.3.4",
        "192.168.1.1",
        "169.254.169.254",
        "100.64.0.1",
        "0.0.0.0",
        "::1",
        "fc00::1",
        "fe80::1",
        "::ffff:10.0.0.1",
        "127.0.0.1",
        # 6to4 addresses wrapping 10.0.0.1, 169.254.169.254 and 127.0.0.1 (review finding 6)
        "2002:a00:1::1",
        "2002:a9fe:a9fe::1",
        "2002:7f00:1::1",
        "fec0::1",  # site-local: passed on Python 3.11, whose tables did not list it
        "192.88.99.1",
        "fe80::1%eth0",  # as getaddrinfo writes a link-local answer
        "64:ff9b::a9fe:a9fe",  # NAT64 of 169.254.169.254
    ],
)
def test_a_host_resolving_to_a_private_address_is_never_fetched(monkeypatch: pytest.MonkeyPatch, address: str) -> None:
    family = socket.AF_INET6 if ":" in address else socket.AF_INET

    def resolve(host: str, port: int, *args: Any, **kwargs: Any) -> list[Any]:
        return [(family, socket.SOCK_STREAM, 6, "", (address, port))]

    def never(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("connected to a refused address")

    monkeypatch.setattr(socket, "getaddrinfo", resolve)
    monkeypatch.setattr(socket, "create_connection", never)
    detail = refused("https://client.example/meta.json", allow_loopback=False)
    assert f"resolves to {address}, a private, loopback or reserved address" in detail


def test_a_redirect_is_not_followed(documents: Documents) -> None:
    assert "redirects" in refused(documents.url + "/moved", allow_loopback=True)
    assert documents.requests == 1


def test_a_document_over_the_size_cap_is_refused(documents: Documents) -> None:
    assert "larger than" in refused(documents.url + "/big", allow_loopback=True)


def test_a_document_trickling_in_is_cut_off_at_the_timeout(documents: Documents) -> None:
    assert "too long" in refused(documents.url + "/slow", allow_loopback=True, timeout=0.4)


def test_every_refusal_tells_the_client_the_same_text_and_keeps_what_it_saw_for_the_log(
    documents: Documents, monkeypatch: pytest.MonkeyPatch
) -> None:
    details = {
        refused(documents.url + "/missing/../client.json", allow_loopback=True),
        refused(documents.url + "/moved", allow_loopback=True),
        refused(documents.url + "/big", allow_loopback=True),
        refused("https://10.0.0.5/client.json", allow_loopback=False),
    }
    monkeypatch.setattr(cimd, "_resolve", lambda host, port, timeout: [])
    details.add(refused("https://client.example/meta.json", allow_loopback=False))
    assert len(details) == 5  # five different causes, one public text (checked in `refused`)
    assert all(PUBLIC not in detail for detail in details)
    assert DocumentError.public == PUBLIC and DocumentError("what the fetch saw").detail == "what the fetch saw"


def test_a_document_and_its_max_age_are_read(documents: Documents) -> None:
    document, max_age = fetch_document(documents.url + "/client.json", allow_loopback=True)
    assert document["client_name"] == "Documented Client" and max_age == 600


async def _rig(**env: str) -> tuple[Rig, Any]:
    kit = build_kit(
        load_app("tests/apps/scoped.py"), settings(**env), streaming=True, local=True, stores=Stores.memory()
    )
    assert kit.facade is not None
    upstream = FakeUpstream()
    kit.facade.upstream = upstream  # type: ignore[assignment]
    http = httpx.AsyncClient(transport=httpx.ASGITransport(app=kit.asgi()), base_url=BASE)
    return Rig(http, upstream, kit), http


async def test_a_cimd_client_signs_in_and_its_document_is_cached(documents: Documents) -> None:
    rig, http = await _rig()
    async with http:
        client_id = documents.url + "/client.json"
        page = await rig.authorize(client_id)
        assert page.status_code == 200 and "Documented Client" in page.text and "127.0.0.1:9999" in page.text
        code = await rig.callback(await rig.consent(page))
        tokens = await rig.exchange(client_id, code)
        assert tokens.status_code == 200, tokens.text
        assert documents.requests == 1  # cached for its max-age: fetched once for authorize and token


async def test_unusable_documents_are_an_invalid_client_page_never_a_5xx(documents: Documents) -> None:
    rig, http = await _rig()
    async with http:
        for client_id in (documents.url + "/moved", "https://10.0.0.5/client.json", documents.url + "/big"):
            page = await rig.authorize(client_id)
            assert page.status_code == 400 and "location" not in page.headers, client_id
            assert "metadata document" in page.text
        documents.document["client_id"] = "https://someone.else/client.json"
        page = await rig.authorize(documents.url + "/client.json")
        assert page.status_code == 400 and "metadata document" in page.text
        token = await http.post(
            "/oauth/token",
            data={"grant_type": "authorization_code", "code": "x", "client_id": documents.url + "/moved"},
        )
        assert token.status_code == 401 and token.json()["error"] == "invalid_client"


async def test_a_redirect_uri_outside_the_document_is_an_error_page(documents: Documents) -> None:
    rig, http = await _rig()
    async with http:
        page = await rig.authorize(documents.url + "/client.json", redirect_uri="https://evil.example/cb")
        assert page.status_code == 400 and "location" not in page.headers


async def test_a_deployment_off_loopback_refuses_loopback_documents(documents: Documents) -> None:
    rig, http = await _rig(LAMBDA_MCP_AUTH_AUDIENCE="https://mcp.example.com/mcp")
    async with http:
        page = await rig.authorize(documents.url + "/client.json", resource="https://mcp.example.com/mcp")
        assert page.status_code == 400 and documents.requests == 0
    assert query(REDIRECT + "?a=b") == {"a": "b"}
