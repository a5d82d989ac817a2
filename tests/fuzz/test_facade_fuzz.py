"""Fuzz the authorization facade's routes (DCR, metadata documents, authorize, consent, callback, token,
revoke) and identity for agents (the machine grants, DPoP at the token endpoint and `/mcp`, the metadata
document: `agent_probes.py`) with Hypothesis through the Lambda handler, checking the properties of
`facade_properties.py` on every exchange. The DPoP family also runs against a facade that asks for DPoP
nonces, and a deterministic sweep sets each member of each JWT the facade reads to each edge value.

The `facade-ci` and `facade-agents-ci` profiles keep the module well under a minute;
`LAMBDA_MCP_FUZZ_PROFILE=fuzz-long` runs many more examples (`bench/facade_fuzz.py` runs the same
properties, counts what they find, and also drives the streaming server and the nonce target).
"""

from __future__ import annotations

import json
import os
import socket
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from .agent_probes import (
    ASSERTION_TYPE,
    CALL,
    CALL_HEADERS,
    DOWN_IDP,
    FORM_TYPE,
    JWT_BEARER,
    Cat,
    Signed,
    edge_probes,
)
from .agent_probes import FAMILIES as AGENT_FAMILIES
from .auth_probes import TAINT
from .facade_probes import FAMILIES, FacadeProbe, Form, facade_probes
from .facade_properties import FacadeOutcome, check, describe, run_facade_probe
from .facade_target import FacadeTarget, LoopbackResolver, NonceFacadeTarget
from .probes import Ref
from .properties import categories_of, signature

AGENT_EXAMPLES = 120
"""Examples per identity-for-agents family (and of `dpop` on the nonce target) in the default profile: with
the edge sweeps below they keep the module within a few seconds of its run before issue 36 (the long
profile runs 3,000 of each, `bench/facade_fuzz.py` as many as asked)."""
HEALTH = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much, HealthCheck.large_base_example]
settings.register_profile("facade-ci", max_examples=500, deadline=None, suppress_health_check=HEALTH, print_blob=True)
settings.register_profile("facade-fuzz-long", parent=settings.get_profile("facade-ci"), max_examples=3000)
LONG = os.environ.get("LAMBDA_MCP_FUZZ_PROFILE") == "fuzz-long"
PROFILE = settings.get_profile("facade-fuzz-long" if LONG else "facade-ci")
settings.register_profile("facade-agents-ci", parent=settings.get_profile("facade-ci"), max_examples=AGENT_EXAMPLES)
AGENT_PROFILE = settings.get_profile("facade-fuzz-long" if LONG else "facade-agents-ci")


@pytest.fixture(scope="module")
def target() -> Iterator[FacadeTarget]:
    """One facade for the module: its registered clients and the document server are reused."""
    built = FacadeTarget()
    yield built
    built.close()


@pytest.fixture(scope="module")
def nonce_target() -> Iterator[FacadeTarget]:
    """The same facade asking for DPoP nonces (`LAMBDA_MCP_AUTH_DPOP_NONCE=on`)."""
    built = NonceFacadeTarget()
    yield built
    built.close()


@pytest.mark.parametrize("family", FAMILIES)
@settings(PROFILE)
@given(data=st.data())
def test_every_facade_exchange_keeps_the_properties(target: FacadeTarget, family: str, data: st.DataObject) -> None:
    probe = data.draw(facade_probes(family), label="probe")
    outcome, findings = run_facade_probe(target, probe)
    assert not findings, describe(outcome, findings)


@pytest.mark.parametrize("family", AGENT_FAMILIES)
@settings(AGENT_PROFILE)
@given(data=st.data())
def test_every_agent_identity_exchange_keeps_the_properties(
    target: FacadeTarget, family: str, data: st.DataObject
) -> None:
    probe = data.draw(facade_probes(family), label="probe")
    outcome, findings = run_facade_probe(target, probe)
    assert not findings, describe(outcome, findings)


@settings(AGENT_PROFILE)
@given(data=st.data())
def test_dpop_exchanges_keep_the_properties_when_nonces_are_required(
    nonce_target: FacadeTarget, data: st.DataObject
) -> None:
    probe = data.draw(facade_probes("dpop"), label="probe")
    outcome, findings = run_facade_probe(nonce_target, probe)
    assert not findings, describe(outcome, findings)


def _machine(*fields: tuple[str, object], headers: tuple[tuple[str, object], ...] = (), **extra: bool) -> FacadeProbe:
    return FacadeProbe("machine", "POST", "/oauth/token", headers=FORM_TYPE + headers, body=Form(fields), **extra)


def _asserted(*fields: tuple[str, object], client: str = "agent", **extra: object) -> FacadeProbe:
    assertion = (("client_assertion_type", ASSERTION_TYPE), ("client_assertion", Signed("assertion", client)))
    return _machine(*assertion, *fields, **extra)  # type: ignore[arg-type]


def _mcp(token: str, scheme: str, *proofs: object) -> FacadeProbe:
    headers = (*CALL_HEADERS, ("authorization", Cat((scheme, Ref(token)))), *(("dpop", proof) for proof in proofs))
    return FacadeProbe("dpop", "POST", "/mcp", headers=headers, body=CALL)


def _sent(target: FacadeTarget, probe: FacadeProbe) -> tuple[FacadeOutcome, dict[str, object]]:
    outcome, findings = run_facade_probe(target, probe)
    assert not findings, describe(outcome, findings)
    document = json.loads(outcome.body) if outcome.body[:1] == b"{" else {}
    return outcome, document


SWEEPS = [
    *(("lambda", kind) for kind in ("assertion", "id-jag", "dpop-token", "dpop-mcp")),
    *(("lambda-nonce", kind) for kind in ("dpop-token", "dpop-mcp")),
]
"""Where each sweep runs: every member on the facade without nonces, the nonce on the one with them."""


@pytest.mark.parametrize(("where", "kind"), SWEEPS)
def test_every_jwt_member_with_every_edge_value_keeps_the_properties(
    request: pytest.FixtureRequest, where: str, kind: str
) -> None:
    """The deterministic sweep beside the random probes: each member of each JWT the facade reads, set
    to each edge value (`agent_probes.edge_probes`); every distinct finding is reported at once."""
    target: FacadeTarget = request.getfixturevalue("target" if where == "lambda" else "nonce_target")
    found: dict[str, str] = {}
    probes = edge_probes(kind, () if where == "lambda" else ("nonce",))
    for probe in probes:
        outcome, findings = run_facade_probe(target, probe)
        for finding in findings:
            found.setdefault(signature(finding), describe(outcome, [finding]))
    assert len(probes) > (100 if where == "lambda" else 10)
    assert not found, f"{len(found)} distinct findings:\n\n" + "\n\n".join(found.values())


def test_the_probes_valid_requests_reach_every_new_grant(target: FacadeTarget) -> None:
    """The fuzzer's right values are right: each grant, client kind and proof succeeds as sent, and the
    near misses the probes are built from are refused for the reason meant (so the fuzzing reaches past
    client authentication, the ID-JAG checks and the proof checks)."""
    cc = ("grant_type", "client_credentials")
    for client in ("agent", "keyed", "rsa"):
        outcome, answer = _sent(target, _asserted(cc, client=client))
        assert outcome.status == 200 and answer["token_type"] == "Bearer" and "refresh_token" not in answer, client
    outcome, answer = _sent(target, _machine(cc, headers=(("authorization", Ref("operator-basic")),)))
    assert outcome.status == 200, answer
    jag = (("grant_type", JWT_BEARER), ("assertion", Signed("id-jag")))
    outcome, answer = _sent(target, _asserted(*jag, headers=(("dpop", Signed("dpop")),)))
    assert outcome.status == 200 and answer["token_type"] == "DPoP", answer
    outcome, answer = _sent(target, _asserted(*jag, repeat=True))  # the request again: its assertion is spent
    assert outcome.status == 401 and "already used" in str(answer["error_description"]), answer
    outcome, answer = _sent(target, _asserted(("grant_type", JWT_BEARER), ("assertion", Ref("spent-id-jag"))))
    assert outcome.status == 400 and "ID-JAG was already used" in str(answer["error_description"]), answer
    down = (("grant_type", JWT_BEARER), ("assertion", Signed("id-jag", claims=(("iss", DOWN_IDP),))))
    outcome, answer = _sent(target, _asserted(*down, unavailable=True))
    assert outcome.status == 503 and answer["error"] == "temporarily_unavailable", answer
    outcome, answer = _sent(target, _asserted(cc, client="down", unavailable=True))
    assert outcome.status == 503 and answer["error"] == "temporarily_unavailable", answer
    for change, why in (
        (Signed("assertion", key="other"), "signature"),
        (Signed("assertion", claims=(("exp", 10**9 + 2_000_000_000),)), "within 300 seconds"),
        (Signed("assertion", header=(("alg", "none"),), key="none"), "algorithm"),
    ):
        form = (cc, ("client_assertion_type", ASSERTION_TYPE), ("client_assertion", change))
        outcome, answer = _sent(target, _machine(*form))
        assert outcome.status == 401 and why in str(answer["error_description"]), (why, answer)
    for token in ("bound-token", "enterprise-token"):
        outcome, answer = _sent(target, _mcp(token, "DPoP ", Signed("dpop", token=token)))
        assert outcome.status == 200 and "principal" in outcome.body.decode(), outcome.body[:300]
    outcome, _ = _sent(target, _mcp("unbound-token", "Bearer "))
    assert outcome.status == 200, outcome.body[:300]
    for near_miss in (
        _mcp("bound-token", "Bearer ", Signed("dpop", token="bound-token")),
        _mcp("bound-token", "DPoP ", Signed("dpop", token="bound-token", key="other")),
        _mcp("bound-token", "DPoP ", Signed("dpop", token="bound-token", jwk="private")),
        _mcp("bound-token", "DPoP ", Signed("dpop", token="bound-token"), Signed("dpop", token="bound-token")),
        _mcp("bound-token", "DPoP ", Signed("dpop", token="bound-token", header=(("typ", "JWT"),))),
    ):
        outcome, _ = _sent(target, near_miss)
        assert outcome.status == 401 and outcome.headers["www-authenticate"].startswith("DPoP "), near_miss
    refresh = (
        ("grant_type", "refresh_token"),
        ("refresh_token", Ref("bound-refresh")),
        ("client_id", Ref("client_id")),
    )
    outcome, answer = _sent(target, _machine(*refresh, headers=(("dpop", Signed("dpop")),)))
    assert outcome.status == 200 and answer["token_type"] == "DPoP", answer
    outcome, answer = _sent(target, _machine(*refresh, headers=(("dpop", Signed("dpop", key="other")),)))
    assert outcome.status == 400 and answer["error"] == "invalid_dpop_proof", answer
    metadata = FacadeProbe("metadata", "GET", "/.well-known/oauth-authorization-server")
    _, document = _sent(target, metadata)
    assert {"client_credentials", JWT_BEARER} <= set(document["grant_types_supported"])  # type: ignore[arg-type]
    assert "private_key_jwt" in document["token_endpoint_auth_methods_supported"]  # type: ignore[operator]
    assert all(target.agents.key_fetches.values())  # the IdPs' keys came from the stand-in fetches, not the wire


def test_the_nonce_target_asks_for_nonces_and_its_probes_carry_them(nonce_target: FacadeTarget) -> None:
    nonce = nonce_target.nonce()
    assert nonce is not None
    cc = ("grant_type", "client_credentials")
    outcome, answer = _sent(nonce_target, _asserted(cc, headers=(("dpop", Signed("dpop")),)))
    assert outcome.status == 200 and answer["token_type"] == "DPoP", answer
    stale = Signed("dpop", claims=(("nonce", "1.abc"),))
    outcome, answer = _sent(nonce_target, _asserted(cc, headers=(("dpop", stale),)))
    assert answer["error"] == "use_dpop_nonce" and outcome.headers["dpop-nonce"], answer
    outcome, _ = _sent(nonce_target, _mcp("bound-token", "DPoP ", Signed("dpop", token="bound-token")))
    assert outcome.status == 200, outcome.body[:300]


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


def test_the_agent_identity_properties_flag_what_they_must() -> None:
    """The properties identity for agents adds fire on an exchange that breaks them, and only then."""
    down = b'{"error":"temporarily_unavailable","error_description":"try again"}'
    assert check(_outcome(503, down, unavailable=True)) == []
    assert categories_of(check(_outcome(503, down))) == {"5xx"}  # a 503 the probe was not aimed at
    assert categories_of(check(_outcome(503, b'{"error":"server_error"}', unavailable=True))) == {"5xx"}
    assert categories_of(check(_outcome(503, down, "/mcp", unavailable=True))) == {"5xx"}
    assertion = "eyJhbGciOiJFUzI1NiJ9.eyJpc3MiOiJhIn0.c2lnbmF0dXJlLW9mLWEtY2xpZW50LWFzc2VydGlvbg"
    echoed = b'{"error":"invalid_client","error_description":"bad ' + assertion.encode() + b'"}'
    challenge = {"content-type": "application/json", "www-authenticate": 'Basic realm="oauth"'}
    assert categories_of(check(_outcome(401, echoed, headers=challenge, secrets=[assertion]))) == {"secret"}
    signature = b'{"error":"invalid_client","error_description":"' + assertion.rsplit(".")[-1].encode() + b'"}'
    assert categories_of(check(_outcome(401, signature, headers=challenge, secrets=[assertion]))) == {"secret"}
    assert check(_outcome(401, b'{"error":"invalid_client"}', headers=challenge, secrets=[assertion])) == []
    bound = b'{"access_token":"a.b.c","token_type":"DPoP"}'
    assert categories_of(check(_outcome(200, bound))) == {"shape"}  # no proof was sent
    proven = _outcome(200, bound)
    proven.request_headers["dpop"] = "x.y.z"
    assert check(proven) == []
    machine = _outcome(200, b'{"access_token":"a.b.c","token_type":"Bearer","refresh_token":"r"}')
    machine.request_body = b"grant_type=client_credentials"
    assert categories_of(check(machine)) == {"shape"}
    assert categories_of(check(_outcome(400, b'{"error":"use_dpop_nonce"}'))) == {"shape"}
    nonce = {"content-type": "application/json", "dpop-nonce": "1.x"}
    assert check(_outcome(400, b'{"error":"use_dpop_nonce"}', headers=nonce)) == []
    unchallenged = _outcome(401, b'{"jsonrpc":"2.0"}', "/mcp", headers={"content-type": "application/json"})
    assert categories_of(check(unchallenged)) == {"shape"}
    asked = {"content-type": "application/json", "www-authenticate": 'DPoP error="use_dpop_nonce"'}
    assert categories_of(check(_outcome(401, b"{}", "/mcp", headers=asked))) == {"shape"}
    metadata = b'{"issuer":"http://a","token_endpoint":"http://b/oauth/token"}'
    path = "/.well-known/oauth-authorization-server"
    assert categories_of(check(_outcome(200, metadata, path, method="GET"))) == {"shape"}
    assert check(_outcome(200, b'{"issuer":"http://a","token_endpoint":"http://a/t"}', path, method="GET")) == []


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
