"""The facade's small parts on their own: its form parser, its sealing, who it admits and what it copies,
its reading of the source address, and how a redirect URI is shown."""

from __future__ import annotations

import pytest
from starlette.requests import Request

from lambda_mcp.facade.admission import admitted, copied
from lambda_mcp.facade.errors import OAuthError
from lambda_mcp.facade.forms import form_fields
from lambda_mcp.facade.limits import source_address
from lambda_mcp.facade.redirects import destination, redirect_matches
from lambda_mcp.facade.sealing import derived_key, seal, unseal

FORM = "application/x-www-form-urlencoded"


def test_forms_are_parsed_with_the_standard_library() -> None:
    assert form_fields(b"a=1&b=&c=%C3%A9+x", FORM) == {"a": "1", "b": "", "c": "\u00e9 x"}
    assert form_fields(b"grant_type=x", f"{FORM}; charset=UTF-8") == {"grant_type": "x"}
    assert form_fields(b"grant_type=x", None) == {"grant_type": "x"}  # no content type: read as a form


@pytest.mark.parametrize(
    ("body", "content_type"),
    [
        (b"a=1&a=2", FORM),  # RFC 6749 §3.1: never twice
        (b'{"grant_type": "x"}', "application/json"),
        (b"a=\xff", FORM),
        (b"&".join(b"f%d=1" % n for n in range(65)), FORM),
    ],
)
def test_a_form_the_facade_cannot_read_is_invalid_request(body: bytes, content_type: str) -> None:
    with pytest.raises(OAuthError) as refused:
        form_fields(body, content_type)
    assert refused.value.error == "invalid_request"


def test_a_sealed_value_opens_only_with_its_key_and_for_its_row() -> None:
    key, other = derived_key(b"state key", "upstream refresh token"), derived_key(b"state key", "another purpose")
    sealed = seal(key, "upstream-refresh-token", "family-1")
    assert "upstream-refresh-token" not in sealed
    assert unseal([other, key], sealed, "family-1") == "upstream-refresh-token"  # any key of the ring opens
    assert unseal([other], sealed, "family-1") is None
    assert unseal([key], sealed, "family-2") is None  # moved to another row: refused
    assert unseal([key], sealed[:-4] + "AAAA", "family-1") is None
    assert unseal([key], None, "family-1") is None and unseal([key], "v1.!!", "family-1") is None


def test_conditions_hold_for_text_booleans_and_lists() -> None:
    claims = {"hd": "example.com", "email_verified": True, "groups": ["staff", 7], "age": 42}
    assert admitted(claims, [("hd", "example.com"), ("email_verified", "true"), ("groups", "staff")])
    assert admitted(claims, [("groups", "7"), ("age", "42")])
    assert not admitted(claims, [("email_verified", "True")])
    assert not admitted(claims, [("missing", "None")])
    assert not admitted({"email_verified": False}, [("email_verified", "true")])
    assert admitted(claims, [])


def test_copied_claims_never_replace_the_tokens_own_and_stay_small() -> None:
    claims = {"sub": "u", "iss": "x", "scope": "admin", "email": "a@example.com", "when": {"n": 1}}
    assert copied(claims, ["email", "sub", "iss", "scope", "missing", "when"]) == {
        "email": "a@example.com",
        "when": {"n": 1},
    }
    assert copied({"groups": ["g" * 100] * 100}, ["groups"]) == {}


def _request(scope: dict[str, object]) -> Request:
    return Request({"type": "http", "method": "GET", "path": "/", "headers": [], **scope})


def test_the_source_address_is_the_front_doors() -> None:
    http_api = {"requestContext": {"http": {"sourceIp": "198.51.100.1"}}}
    rest_api = {"requestContext": {"identity": {"sourceIp": "198.51.100.2"}}}
    assert source_address(_request({"aws.event": http_api, "client": ("127.0.0.1", 0)})) == "198.51.100.1"
    assert source_address(_request({"aws.event": rest_api})) == "198.51.100.2"
    assert source_address(_request({"client": ("203.0.113.5", 4242)})) == "203.0.113.5"
    forwarded = {"headers": [(b"x-forwarded-for", b"10.0.0.1")], "client": ("203.0.113.6", 1)}
    assert source_address(_request(forwarded)) == "203.0.113.6"  # never a header a client writes
    assert source_address(_request({})) == "unknown"


@pytest.mark.parametrize(
    ("uri", "kind", "shown"),
    [
        ("https://Claude.AI/cb", "web", "https://claude.ai:443"),
        ("https://xn--laude-0ye.ai/cb", "web", "https://xn--laude-0ye.ai:443"),
        ("https://client.example:8443/cb", "web", "https://client.example:8443"),
        ("http://localhost:33418/callback", "loopback", "http://localhost:33418"),
        ("http://[::1]/cb", "loopback", "http://[::1]:80"),
        ("cursor://anysphere.cursor-mcp/oauth/callback", "app", "cursor://anysphere.cursor-mcp/oauth/callback"),
    ],
)
def test_a_redirect_is_shown_as_the_browser_will_go_there(uri: str, kind: str, shown: str) -> None:
    assert (destination(uri).kind, destination(uri).shown) == (kind, shown)


def test_the_loopback_rule_relaxes_the_port_only() -> None:
    assert redirect_matches("http://127.0.0.1/cb", "http://127.0.0.1:4242/cb")
    assert not redirect_matches("http://127.0.0.1/cb", "http://127.0.0.1:4242/cb\t")
    assert not redirect_matches("http://127.0.0.1/cb", "http://localhost:4242/cb")
    assert not redirect_matches("https://a.example/cb", "https://a.example:4242/cb")
