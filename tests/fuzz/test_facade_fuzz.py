"""Fuzz the authorization facade's routes (DCR, metadata documents, authorize, consent, callback, token,
revoke) with Hypothesis through the Lambda handler, checking the properties of `facade_properties.py`
on every exchange.

The `facade-ci` profile keeps the module well under a minute; `LAMBDA_MCP_FUZZ_PROFILE=fuzz-long` runs
many more examples (`bench/facade_fuzz.py` runs the same properties, counts what they find, and also
drives the streaming server).
"""

from __future__ import annotations

import os
import socket
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from .auth_probes import TAINT
from .facade_probes import FAMILIES, facade_probes
from .facade_properties import FacadeOutcome, check, describe, run_facade_probe
from .facade_target import FacadeTarget, LoopbackResolver
from .properties import categories_of

HEALTH = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much, HealthCheck.large_base_example]
settings.register_profile("facade-ci", max_examples=500, deadline=None, suppress_health_check=HEALTH, print_blob=True)
settings.register_profile("facade-fuzz-long", parent=settings.get_profile("facade-ci"), max_examples=3000)
LONG = os.environ.get("LAMBDA_MCP_FUZZ_PROFILE") == "fuzz-long"
PROFILE = settings.get_profile("facade-fuzz-long" if LONG else "facade-ci")


@pytest.fixture(scope="module")
def target() -> Iterator[FacadeTarget]:
    """One facade for the module: its registered clients and the document server are reused."""
    built = FacadeTarget()
    yield built
    built.close()


@pytest.mark.parametrize("family", FAMILIES)
@settings(PROFILE)
@given(data=st.data())
def test_every_facade_exchange_keeps_the_properties(target: FacadeTarget, family: str, data: st.DataObject) -> None:
    probe = data.draw(facade_probes(family), label="probe")
    outcome, findings = run_facade_probe(target, probe)
    assert not findings, describe(outcome, findings)


def _outcome(status: int, body: bytes, path: str = "/oauth/token", **fields: object) -> FacadeOutcome:
    headers = fields.pop("headers", {"content-type": "application/json"})
    return FacadeOutcome(status, headers, body, {":query": "?"}, b"", None, path=path, **fields)  # type: ignore[arg-type]


def test_the_facade_properties_flag_what_they_must() -> None:
    """The properties are not vacuous: each one fires on an exchange that breaks it."""
    assert categories_of(check(_outcome(500, b"Internal Server Error", escaped=["KeyError in x: 1"]))) >= {"5xx"}
    assert "leak" in categories_of(check(_outcome(400, b'{"error":"x","error_description":"KeyError: 1"}')))
    assert categories_of(check(_outcome(400, b'{"error_description":"x"}'))) == {"shape"}
    assert categories_of(check(_outcome(401, b'{"error":"invalid_client"}'))) == {"shape"}  # no challenge
    assert categories_of(check(_outcome(200, b"<html>", "/oauth/register"))) == {"shape"}
    split = {"content-type": "text/plain", "x-state": "a\r\nSet-Cookie: x=1"}
    assert categories_of(check(_outcome(400, b"", "/oauth/authorize", headers=split))) == {"header"}
    echo = {"content-type": "text/plain", "www-authenticate": f'Basic realm="{TAINT}"'}
    assert categories_of(check(_outcome(400, b"", "/oauth/authorize", headers=echo))) == {"header"}
    page = {"content-type": "text/html; charset=utf-8"}
    injected = b'<p><code>"' + TAINT.encode() + b"</code></p>"
    assert categories_of(check(_outcome(200, injected, "/oauth/authorize", headers=page))) == {"html"}
    assert categories_of(check(_outcome(200, b"<SCRIPT>1</SCRIPT>", "/oauth/authorize", headers=page))) == {"html"}
    away = {"location": "https://evil.example/cb?code=x"}
    assert categories_of(check(_outcome(302, b"", "/oauth/consent", headers=away))) == {"redirect"}
    home = {"location": "http://127.0.0.1:1234/callback?code=x"}
    fine = _outcome(302, b"", "/oauth/consent", headers=home, redirect_authorities=frozenset({("http", "127.0.0.1")}))
    assert check(fine) == []
    renewed = [f"lmcp_browser={TAINT}; Path=/"]
    assert categories_of(check(_outcome(200, b"", "/oauth/authorize", headers=page, cookies=renewed))) == {"header"}
    assert check(_outcome(200, b"", "/oauth/authorize", headers=page, cookies=renewed, browser=TAINT)) == []
    slow = _outcome(400, b'{"error":"x"}', elapsed=9.0)
    assert categories_of(check(slow)) == {"hang"}
    assert categories_of(check(_outcome(400, b'{"error":"x"}', key_problems=["a client key is not valid UTF-8"]))) == {
        "storage-key"
    }


def test_the_fuzzer_resolves_no_name_but_loopback() -> None:
    """While a target is open no metadata document fetch can leave the machine: only `localhost` and IP
    literals resolve."""
    before = socket.getaddrinfo
    with LoopbackResolver():
        assert socket.getaddrinfo("127.1", 80)[0][4][0] == "127.0.0.1"
        assert socket.getaddrinfo("localhost", 80)
        with pytest.raises(socket.gaierror):
            socket.getaddrinfo("example.com", 443)
        with pytest.raises(socket.gaierror):
            socket.getaddrinfo("\u24dbocalhost", 443)
    assert socket.getaddrinfo is before
