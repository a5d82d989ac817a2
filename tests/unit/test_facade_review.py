"""A security review of the authorization facade: each test pins a defect the review found (now fixed).

In process, with the rig of `test_facade_http` (a fake upstream) and a loopback server for metadata
documents."""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from typing import Any

import pytest

from lambda_mcp.facade import clients as clients_module
from lambda_mcp.facade.cimd import MAX_BYTES, DocumentError, fetch_document
from tests.support.loopback import LoopbackServer, respond
from tests.unit import test_facade_http
from tests.unit.test_facade_http import REDIRECT, Rig

pytestmark = pytest.mark.anyio
rig = test_facade_http.rig  # the fixture: an in-process facade with a fake upstream


# -- redirect URIs: the loopback rule relaxes the port only ------------------------------------------------
@pytest.mark.parametrize(
    "requested",
    [
        "http://evil.example\\@127.0.0.1:9999/callback",  # a URL parser's disagreement over the host
        "http://someone@127.0.0.1:41234/callback",  # credentials the registered URI does not have
        "http://127.0.0.1:1@127.0.0.1:9999/callback",
        "http://127.0.0.1:abc/callback",  # no port at all
        "http://[::1/callback",  # malformed: was a 500
        "http://127.0.0.1\uff0fx/callback",  # NFKC-ambiguous host: was a 500
    ],
)
async def test_a_loopback_redirect_that_differs_beyond_its_port_is_an_error_page(rig: Rig, requested: str) -> None:
    client = await rig.register()
    page = await rig.authorize(client["client_id"], redirect_uri=requested)
    assert page.status_code == 400 and "location" not in page.headers, requested
    assert "redirect" in page.text.lower()


async def test_the_loopback_rule_still_accepts_another_port_and_ipv6(rig: Rig) -> None:
    client = await rig.register(redirect_uris=[REDIRECT, "http://[::1]/cb"])
    assert (await rig.authorize(client["client_id"], redirect_uri="http://127.0.0.1:5/callback")).status_code == 200
    assert (await rig.authorize(client["client_id"], redirect_uri="http://[::1]:8123/cb")).status_code == 200


@pytest.mark.parametrize(
    "uri",
    [
        "https://trusted.example@evil.example/cb",  # the consent page would name "trusted.example@evil.example"
        "https://trusted.example\\@evil.example/cb",
        "http://user:pw@127.0.0.1/cb",
    ],
)
async def test_a_redirect_uri_with_credentials_is_refused_at_registration(rig: Rig, uri: str) -> None:
    answer = await rig.http.post("/oauth/register", json={"redirect_uris": [uri]})
    assert answer.status_code == 400 and answer.json()["error"] == "invalid_redirect_uri", uri


# -- registration: bad types are a 400, never a 500 -----------------------------------------------------------
@pytest.mark.parametrize(
    "metadata",
    [
        {"redirect_uris": [REDIRECT], "grant_types": [{}]},
        {"redirect_uris": [REDIRECT], "response_types": [["code"]]},
        {"redirect_uris": [REDIRECT], "grant_types": "authorization_code"},
    ],
)
async def test_registration_fields_of_the_wrong_type_are_a_400(rig: Rig, metadata: dict[str, Any]) -> None:
    answer = await rig.http.post("/oauth/register", json=metadata)
    assert answer.status_code == 400 and answer.json()["error"] == "invalid_client_metadata"


# -- client metadata documents ----------------------------------------------------------------------------
async def test_a_document_that_would_overflow_a_row_is_an_invalid_client_page(
    rig: Rig, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = "https://client.example/meta.json"
    wide = "https://client.example/" + "\u00e9" * 1500  # 2 bytes here, 6 once stored as escaped JSON
    document = {"client_id": url, "redirect_uris": [wide + str(i) for i in range(5)], "client_name": "Wide"}
    assert len(json.dumps(document, ensure_ascii=False).encode()) <= MAX_BYTES  # a fetchable document

    def fetched(fetch_url: str, allow_loopback: bool) -> tuple[dict[str, Any], int]:
        return document, 600

    monkeypatch.setattr(clients_module, "fetch_document", fetched)
    page = await rig.authorize(url, redirect_uri=wide + "0")
    assert page.status_code == 400 and "location" not in page.headers
    assert "metadata document" in page.text


class _Trickle:
    """A loopback server that sends a status line, then its headers a byte every 0.1 s, for 3 s."""

    def __init__(self) -> None:
        self.server = LoopbackServer(self._handle)

    def _handle(self, handler: BaseHTTPRequestHandler) -> None:
        try:
            handler.wfile.write(b"HTTP/1.0 200 OK\r\nX-Slow: ")
            for _ in range(30):
                handler.wfile.write(b"a")
                handler.wfile.flush()
                time.sleep(0.1)
        except OSError:
            return


@pytest.fixture(scope="module")
def trickle() -> Iterator[_Trickle]:
    server = _Trickle()
    yield server
    server.server.stop()


def test_a_document_whose_headers_trickle_in_is_cut_off_at_the_timeout(trickle: _Trickle) -> None:
    started = time.monotonic()
    with pytest.raises(DocumentError):
        fetch_document(trickle.server.url + "/client.json", allow_loopback=True, timeout=0.4)
    assert time.monotonic() - started < 2.0  # the "a timeout": the whole fetch, headers included


def test_a_host_whose_resolver_stalls_is_cut_off_at_the_timeout(monkeypatch: pytest.MonkeyPatch) -> None:
    def stall(*args: Any, **kwargs: Any) -> list[Any]:  # getaddrinfo has no timeout of its own
        time.sleep(1.5)
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("93.184.215.14", 443))]

    def never(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("connected after the timeout")

    monkeypatch.setattr(socket, "getaddrinfo", stall)
    monkeypatch.setattr(socket, "create_connection", never)
    started = time.monotonic()
    with pytest.raises(DocumentError, match="does not resolve"):
        fetch_document("https://client.example/meta.json", allow_loopback=False, timeout=0.3)
    assert time.monotonic() - started < 1.2


@pytest.mark.parametrize("depth", [12, 3000])
async def test_a_deeply_nested_metadata_document_is_an_invalid_client_page(rig: Rig, depth: int) -> None:
    """Nested deeper than the JSON parser goes (3,000) was a 500; deeper than a client's metadata needs (12)
    is refused too."""
    server = LoopbackServer(lambda handler: respond(handler, 200, document))
    url = f"{server.url}/client.json"
    document = json.dumps({"client_id": url, "redirect_uris": [REDIRECT], "x": 0}).encode()
    document = document[:-1] + b', "y": ' + b"[" * depth + b"]" * depth + b"}"
    try:
        page = await rig.authorize(url)
    finally:
        server.stop()
    assert page.status_code == 400 and "location" not in page.headers
    assert "metadata document could not be used" in page.text


# -- what the facade's fuzzer found (tests/fuzz/test_facade_fuzz.py) ------------------------------------------
@pytest.mark.parametrize("name", ["\udfff", "Claude\u202e", "a\x07b", "\ue000"])
async def test_a_client_name_a_page_cannot_show_as_it_is_is_refused(rig: Rig, name: str) -> None:
    """A lone surrogate was a 500 (the answer echoes the name); a bidirectional override shows a name backwards."""
    body = json.dumps({"redirect_uris": [REDIRECT], "client_name": name}).encode()  # ensure_ascii: \\udfff
    answer = await rig.http.post("/oauth/register", content=body, headers={"content-type": "application/json"})
    assert answer.status_code == 400 and answer.json()["error"] == "invalid_client_metadata"


class _Documents:
    """Serves a valid metadata document at any path, with the Cache-Control the test chooses."""

    def __init__(self) -> None:
        self.cache_control = "max-age=600"
        self.server = LoopbackServer(self._handle)

    def _handle(self, handler: BaseHTTPRequestHandler) -> None:
        url = f"{self.server.url}{handler.path}"
        document = {"client_id": url, "redirect_uris": [REDIRECT], "client_name": "Doc"}
        respond(handler, 200, json.dumps(document).encode(), headers=[("Cache-Control", self.cache_control)])


@pytest.fixture
def documents() -> Iterator[_Documents]:
    served = _Documents()
    yield served
    served.server.stop()


async def test_a_document_cached_for_longer_than_an_int_can_parse_is_cached_a_day(
    rig: Rig, documents: _Documents
) -> None:
    documents.cache_control = "max-age=" + "9" * 5000  # over Python's 4,300-digit int() limit: was a 500
    page = await rig.authorize(documents.server.url + "/client.json")
    assert page.status_code == 200 and "Doc" in page.text


async def test_a_document_url_that_is_not_ascii_is_refused_before_any_fetch(rig: Rig, documents: _Documents) -> None:
    page = await rig.authorize(documents.server.url + "/cli\u00e9nt.json")  # the request line is ASCII: was a 500
    assert page.status_code == 400 and "metadata document could not be used" in page.text


async def test_a_browser_cookie_the_facade_did_not_make_is_replaced_not_echoed(rig: Rig) -> None:
    client = await rig.register()
    rig.http.cookies.set("lmcp_browser", "A" * 10_000)
    page = await rig.authorize(client["client_id"])
    renewed = page.headers["set-cookie"]
    assert page.status_code == 200 and "A" * 100 not in renewed and len(renewed) < 300
