"""The issuer's metadata and keys (`auth/issuer.py`, `auth/fetch.py`): one fetch at a time, failures
remembered, one deadline per discovery, good keys kept, keys that age, redirects checked (review of
issue 21, findings 4, 9 and 10), and what the REST authorizer and the well-known route make of a down
issuer. Real HTTP on 127.0.0.1 where the wire matters; a fake clock where time does."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from http.server import BaseHTTPRequestHandler
from typing import Any

import jwt
import pytest

from lambda_mcp.auth.authorizer import IssuerDown, Unauthorized, authorize
from lambda_mcp.auth.fetch import Deadline, FetchError, allowed_redirect, fetch_json, issuer_metadata
from lambda_mcp.auth.guard import BearerGuard
from lambda_mcp.auth.issuer import Issuer, IssuerUnavailable
from lambda_mcp.auth.tokens import TokenError, TokenValidator
from tests.support.issuer import LocalIssuer
from tests.support.loopback import LoopbackServer, respond
from tests.support.processes import free_port

AUDIENCE = "https://mcp.example.com/mcp"


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class Documents:
    """What a fake issuer answers: its JWKS (or a failure), counting fetches."""

    def __init__(self, issuer: LocalIssuer, delay: float = 0.0) -> None:
        self.issuer = issuer
        self.jwks: dict[str, Any] | Exception = issuer.jwks()
        self.delay = delay
        self.fetches = 0
        self._lock = threading.Lock()

    def fetch(self, url: str, deadline: Deadline) -> dict[str, Any]:
        with self._lock:
            self.fetches += 1
        time.sleep(self.delay)
        if isinstance(self.jwks, Exception):
            raise self.jwks
        return self.jwks

    def keys(self, clock: Clock, **options: Any) -> Issuer:
        return Issuer(self.issuer.url, jwks_url=f"{self.issuer.url}/jwks", fetch=self.fetch, clock=clock, **options)


def _validate(validator: TokenValidator, token: str) -> str:
    try:
        return asyncio.run(validator.validate(token, AUDIENCE)).principal
    except TokenError as exc:
        return f"401: {exc}"
    except IssuerUnavailable as exc:
        return f"503 after {exc.retry_after} s"


# -- finding 4: one fetch at a time, failures remembered, one deadline ----------------------------
def test_requests_arriving_during_the_first_fetch_wait_for_it_and_none_is_refused(issuer: LocalIssuer) -> None:
    """Tokens without a `kid` that arrived during the first fetch got 401 (the set looked loaded, and empty)."""
    documents = Documents(issuer, delay=0.3)
    validator = TokenValidator(documents.keys(Clock()))
    claims = {"iss": issuer.url, "sub": "alice", "aud": AUDIENCE, "exp": int(time.time()) + 300}
    token = jwt.encode(claims, issuer.ec_key, algorithm="ES256")  # no kid: the one EC key fits
    with ThreadPoolExecutor(8) as pool:
        results = list(pool.map(lambda _: _validate(validator, token), range(8)))
    assert results == [f"{issuer.url}#alice"] * 8
    assert documents.fetches == 1


def test_a_failed_fetch_is_remembered_so_later_requests_are_answered_at_once(issuer: LocalIssuer) -> None:
    clock = Clock()
    documents = Documents(issuer)
    documents.jwks = FetchError("could not fetch: connection refused")
    validator = TokenValidator(documents.keys(clock))
    token = issuer.token(AUDIENCE)
    assert _validate(validator, token) == "503 after 15 s"
    clock.now += 10
    assert _validate(validator, token) == "503 after 5 s"  # remembered: no second fetch
    assert documents.fetches == 1
    documents.jwks = issuer.jwks()
    clock.now += 6
    assert _validate(validator, token) == f"{issuer.url}#alice"
    assert documents.fetches == 2


def test_one_deadline_covers_the_whole_discovery() -> None:
    """Three metadata URLs of an issuer that never answers took 15 s; the REST authorizer has 10."""
    hanging = _Server(lambda handler: time.sleep(3))
    try:
        started = time.monotonic()
        with pytest.raises(FetchError):
            issuer_metadata(hanging.url, Deadline(1.0))
        assert time.monotonic() - started < 1.8
    finally:
        hanging.stop()


# -- finding 10: good keys are kept, and keys age -------------------------------------------------
def test_an_empty_or_failed_refresh_never_replaces_good_keys(issuer: LocalIssuer) -> None:
    clock = Clock()
    documents = Documents(issuer)
    validator = TokenValidator(documents.keys(clock))
    good = issuer.token(AUDIENCE)
    assert _validate(validator, good) == f"{issuer.url}#alice"
    for broken in ({"keys": []}, {"keys": "nope"}, {"keys": [{"kty": "oct", "k": "c2VjcmV0"}]}, FetchError("down")):
        documents.jwks = broken
        clock.now += 61  # an unknown kid may refetch once a minute
        assert _validate(validator, issuer.token(AUDIENCE, key="foreign", kid="new")).startswith("401")
        assert _validate(validator, good) == f"{issuer.url}#alice"  # still trusted
    assert documents.fetches == 5


def test_keys_are_refreshed_hourly_and_trusted_no_longer_than_a_day(issuer: LocalIssuer) -> None:
    clock = Clock()
    documents = Documents(issuer)
    validator = TokenValidator(documents.keys(clock))
    rsa_token, ec_token = issuer.token(AUDIENCE), issuer.token(AUDIENCE, key="ec")
    assert _validate(validator, rsa_token) == f"{issuer.url}#alice"
    documents.jwks = {"keys": [k for k in issuer.jwks()["keys"] if k["kid"] != "rsa-1"]}  # the issuer drops a key
    clock.now += 1800
    assert _validate(validator, rsa_token) == f"{issuer.url}#alice"  # within the hour: the set held
    clock.now += 1801
    assert _validate(validator, rsa_token).startswith("401")  # refreshed: the removed key is gone
    assert _validate(validator, ec_token) == f"{issuer.url}#alice"
    documents.jwks = FetchError("down")
    clock.now += 3601
    assert _validate(validator, ec_token) == f"{issuer.url}#alice"  # stale but within the day: kept
    clock.now += 86_400
    assert _validate(validator, ec_token).startswith("503")  # too old to trust, and no new set


# -- finding 9: redirects -------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("source", "target", "allowed"),
    [
        ("https://issuer.example.com/jwks", "https://keys.example.com/jwks", True),
        ("https://issuer.example.com/jwks", "http://keys.example.com/jwks", False),  # down to plain http
        ("https://issuer.example.com/jwks", "http://127.0.0.1/jwks", False),  # https never goes down
        ("http://127.0.0.1:9/jwks", "http://localhost:9/jwks", True),  # local work stays local
        ("http://127.0.0.1:9/jwks", "http://10.0.0.8/jwks", False),
        ("https://issuer.example.com/jwks", "file:///etc/passwd", False),
    ],
)
def test_a_redirect_is_followed_only_where_a_fetch_may_go(source: str, target: str, allowed: bool) -> None:
    assert allowed_redirect(source, target) is allowed


def test_a_redirect_to_plain_http_is_refused_on_the_wire() -> None:
    server = _Server(lambda handler: _redirect(handler, "http://keys.example.com/jwks"))
    try:
        with pytest.raises(FetchError, match="refusing the redirect"):
            fetch_json(f"{server.url}/jwks")
    finally:
        server.stop()
    follows = _Server(lambda handler: _redirect(handler, f"http://127.0.0.1:{follows.port}/final"), final={"ok": 1})
    try:
        assert fetch_json(f"{follows.url}/jwks") == {"ok": 1}
    finally:
        follows.stop()


# -- what an unreachable issuer looks like from outside -------------------------------------------
def test_the_rest_authorizer_does_not_call_a_good_token_bad_when_the_issuer_is_down(issuer: LocalIssuer) -> None:
    documents = Documents(issuer)
    documents.jwks = FetchError("down")
    guard = BearerGuard(TokenValidator(documents.keys(Clock())), frozenset(), AUDIENCE)
    event = {"type": "TOKEN", "methodArn": "arn:aws:execute-api:us-east-1:1:api/v1/POST/mcp"}
    with pytest.raises(IssuerDown):  # API Gateway's AUTHORIZER_FAILURE (template.yaml: 503 + Retry-After)
        asyncio.run(authorize(guard, {**event, "authorizationToken": f"Bearer {issuer.token(AUDIENCE)}"}))
    with pytest.raises(Unauthorized):  # a token that is not one stays a 401
        asyncio.run(authorize(guard, {**event, "authorizationToken": "Bearer nope"}))


def test_the_authorization_server_metadata_route_remembers_a_down_issuer() -> None:
    port = free_port()
    down = Issuer(f"http://127.0.0.1:{port}")  # nothing listens there
    with pytest.raises(IssuerUnavailable) as first:
        down.metadata()
    started = time.monotonic()
    with pytest.raises(IssuerUnavailable) as second:
        down.metadata()
    assert time.monotonic() - started < 0.05 and first.value.retry_after >= second.value.retry_after >= 14


# -- a tiny HTTP server -----------------------------------------------------------------------------
class _Server(LoopbackServer):
    def __init__(self, act: Any, final: dict[str, Any] | None = None) -> None:
        def serve(handler: BaseHTTPRequestHandler) -> None:
            if final is not None and handler.path == "/final":
                respond(handler, 200, json.dumps(final).encode(), None)
                return
            act(handler)

        super().__init__(serve)


def _redirect(handler: BaseHTTPRequestHandler, location: str) -> None:
    handler.send_response(302)
    handler.send_header("location", location)
    handler.send_header("content-length", "0")
    handler.end_headers()
