"""Identity for agents and enterprises, in process: operator-registered clients (`LAMBDA_MCP_AUTH_CLIENTS`),
`client_credentials` with RFC 7523 assertions and with a secret, the jwt-bearer grant with an enterprise
IdP's ID-JAG, and DPoP at the token endpoint and at `/mcp`, with every refusal the issue lists. The
enterprise IdP's keys are served to the facade by a stand-in fetch (the wire is tests/integration's)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import httpx
import jwt
import pytest

from lambda_mcp.auth.issuer import Issuer
from lambda_mcp.auth.tokens import TokenValidator
from lambda_mcp.facade.enterprise import ID_JAG_TYPE
from lambda_mcp.facade.hashing import digest
from lambda_mcp.kit import build_kit
from lambda_mcp.loader import load_app
from tests.support.agent_keys import (
    ASSERTION_TYPE,
    JWT_BEARER,
    KeyPair,
    client_assertion,
    dpop_proof,
    id_jag,
    operator_entry,
)
from tests.support.client import ACCEPT, META, MODERN
from tests.unit.test_facade_http import BASE, REDIRECT, RESOURCE, FakeUpstream
from tests.unit.test_facade_http import Rig as BrowserRig
from tests.unit.test_facade_http import settings as facade_settings

pytestmark = pytest.mark.anyio
TOKEN_URL = BASE + "/oauth/token"
IDP = "https://idp.enterprise.example"
SECRET = "s" * 43


@dataclass
class Rig:
    http: httpx.AsyncClient
    kit: Any
    agent: KeyPair
    idp: KeyPair

    async def token(self, form: dict[str, str], headers: dict[str, str] | None = None) -> httpx.Response:
        return await self.http.post("/oauth/token", data=form, headers=headers or {})

    async def client_credentials(self, scope: str | None = None, **headers: str) -> httpx.Response:
        form = {
            "grant_type": "client_credentials",
            "client_assertion_type": ASSERTION_TYPE,
            "client_assertion": client_assertion(self.agent, "agent-1", BASE),
        }
        if scope:
            form["scope"] = scope
        return await self.token(form, headers)

    async def call(self, authorization: str, tool: str = "whoami", **headers: str) -> httpx.Response:
        message = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": tool, "_meta": META}}
        routing = {"mcp-protocol-version": MODERN, "mcp-method": "tools/call", "mcp-name": tool, "accept": ACCEPT}
        return await self.http.post(
            "/mcp", json=message, headers={**routing, "authorization": authorization, **headers}
        )


def caller(response: httpx.Response) -> dict[str, Any]:
    assert response.status_code == 200, response.text
    text = response.text
    if "data:" in text:
        text = next(line[5:].strip() for line in text.splitlines() if line.startswith("data:"))
    result = json.loads(text)["result"]
    assert not result.get("isError"), result
    return dict(json.loads(result["content"][0]["text"]))


def rig_for(**extra: str) -> tuple[Any, KeyPair, KeyPair]:
    agent, idp = KeyPair(), KeyPair()
    clients = [
        operator_entry("agent-1", agent, "mcp:tools inventory:read"),
        {
            "client_id": "ci-job",
            "token_endpoint_auth_method": "client_secret_basic",
            "client_secret_hash": digest(SECRET),
            "grant_types": ["client_credentials"],
            "scope": "mcp:tools",
        },
        operator_entry("agent-2", KeyPair(), "mcp:tools", "client_credentials"),
    ]
    env = {"LAMBDA_MCP_AUTH_CLIENTS": json.dumps(clients), "LAMBDA_MCP_AUTH_TRUSTED_ISSUERS": IDP, **extra}
    kit = build_kit(load_app("tests/apps/scoped.py"), facade_settings(**env), streaming=True, local=True)
    assert kit.facade is not None
    kit.facade.upstream = FakeUpstream()
    keys = {"keys": [idp.public_jwk]}
    enterprise = kit.facade.grants.machine.enterprise
    enterprise._validators[IDP] = TokenValidator(
        Issuer(IDP, jwks_url=IDP + "/jwks", fetch=lambda url, deadline: keys), token_type=ID_JAG_TYPE
    )
    return kit, agent, idp


@pytest.fixture
async def rig() -> AsyncIterator[Rig]:
    kit, agent, idp = rig_for()
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=kit.asgi()), base_url=BASE) as http:
        yield Rig(http, kit, agent, idp)


def claims_of(token: str) -> dict[str, Any]:
    return dict(jwt.decode(token, options={"verify_signature": False}))


# -- metadata ---------------------------------------------------------------------------------------------
async def test_the_metadata_advertises_the_machine_grants_and_dpop(rig: Rig) -> None:
    document = (await rig.http.get("/.well-known/oauth-authorization-server")).json()
    assert {"client_credentials", JWT_BEARER} <= set(document["grant_types_supported"])
    assert "private_key_jwt" in document["token_endpoint_auth_methods_supported"]
    assert document["authorization_grant_profiles_supported"] == ["urn:ietf:params:oauth:grant-profile:id-jag"]
    assert "ES256" in document["dpop_signing_alg_values_supported"]
    assert "ES256" in document["token_endpoint_auth_signing_alg_values_supported"]


async def test_without_operator_clients_the_metadata_offers_no_machine_grant() -> None:
    kit = build_kit(
        load_app("tests/apps/scoped.py"), facade_settings(LAMBDA_MCP_AUTH_DPOP="off"), streaming=True, local=True
    )
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=kit.asgi()), base_url=BASE) as http:
        document = (await http.get("/.well-known/oauth-authorization-server")).json()
    assert document["grant_types_supported"] == ["authorization_code", "refresh_token"]
    assert "authorization_grant_profiles_supported" not in document
    assert "dpop_signing_alg_values_supported" not in document


# -- client_credentials -----------------------------------------------------------------------------------
async def test_an_agent_with_a_key_pair_gets_its_own_scopes_and_calls_a_tool_as_itself(rig: Rig) -> None:
    response = await rig.client_credentials()
    assert response.status_code == 200, response.text
    tokens = response.json()
    assert tokens["token_type"] == "Bearer" and "refresh_token" not in tokens
    claims = claims_of(tokens["access_token"])
    assert claims["aud"] == RESOURCE and claims["client_id"] == "agent-1" and "sub" not in claims
    assert claims["scope"] == "mcp:tools inventory:read"
    seen = caller(await rig.call("Bearer " + tokens["access_token"]))
    assert seen == {"principal": f"client:{BASE}#agent-1", "scopes": ["inventory:read", "mcp:tools"]}
    refused = await rig.call("Bearer " + tokens["access_token"], "restock")
    assert refused.status_code == 403 and "inventory:write" in refused.headers["www-authenticate"]


async def test_an_agent_asking_for_fewer_scopes_gets_those_and_for_others_gets_none(rig: Rig) -> None:
    fewer = await rig.client_credentials("mcp:tools inventory:write")
    assert claims_of(fewer.json()["access_token"])["scope"] == "mcp:tools"
    other = await rig.client_credentials("inventory:write")
    assert other.status_code == 400 and other.json()["error"] == "invalid_scope"


async def test_a_client_secret_client_gets_a_token_and_a_wrong_secret_does_not(rig: Rig) -> None:
    good = await rig.token({"grant_type": "client_credentials"}, {"authorization": basic("ci-job", SECRET)})
    assert good.status_code == 200, good.text
    assert caller(await rig.call("Bearer " + good.json()["access_token"]))["principal"] == f"client:{BASE}#ci-job"
    wrong = await rig.token({"grant_type": "client_credentials"}, {"authorization": basic("ci-job", "x" * 43)})
    assert wrong.status_code == 401 and wrong.json()["error"] == "invalid_client"
    post = await rig.token({"grant_type": "client_credentials", "client_id": "agent-1", "client_secret": SECRET})
    assert post.status_code == 401  # agent-1 authenticates with its key only


def basic(client_id: str, secret: str) -> str:
    import base64

    return "Basic " + base64.b64encode(f"{client_id}:{secret}".encode()).decode()


async def test_a_replayed_client_assertion_is_refused(rig: Rig) -> None:
    assertion = client_assertion(rig.agent, "agent-1", TOKEN_URL)  # the token endpoint as aud works too
    form = {"grant_type": "client_credentials", "client_assertion_type": ASSERTION_TYPE, "client_assertion": assertion}
    assert (await rig.token(form)).status_code == 200
    again = await rig.token(form)
    assert again.status_code == 401 and again.json()["error"] == "invalid_client"
    assert "already used" in again.json()["error_description"]


@pytest.mark.parametrize(
    ("overrides", "why"),
    [
        ({"aud": "https://elsewhere.example"}, "aud"),
        ({"exp": 4102444800}, "within 300 seconds"),
        ({"exp": 1000}, "expired"),
        ({"sub": "agent-2"}, "iss and sub"),
        ({"jti": None}, "invalid"),
    ],
)
async def test_a_bad_client_assertion_is_refused(rig: Rig, overrides: dict[str, Any], why: str) -> None:
    claims = {k: v for k, v in overrides.items() if v is not None}
    assertion = client_assertion(rig.agent, "agent-1", BASE, **claims)
    if overrides.get("jti", "") is None:
        assertion = rig.agent.sign({k: v for k, v in claims_of(assertion).items() if k != "jti"})
    form = {"grant_type": "client_credentials", "client_assertion_type": ASSERTION_TYPE, "client_assertion": assertion}
    refused = await rig.token(form)
    assert refused.status_code == 401 and refused.json()["error"] == "invalid_client"
    assert why in refused.json()["error_description"]


async def test_an_assertion_signed_with_another_key_is_refused(rig: Rig) -> None:
    forged = client_assertion(KeyPair(kid=rig.agent.kid), "agent-1", BASE)
    form = {"grant_type": "client_credentials", "client_assertion_type": ASSERTION_TYPE, "client_assertion": forged}
    refused = await rig.token(form)
    assert refused.status_code == 401 and "signature" in refused.json()["error_description"]


async def test_an_anonymous_dcr_client_cannot_use_the_machine_grants(rig: Rig) -> None:
    registered = await rig.http.post(
        "/oauth/register",
        json={"redirect_uris": [REDIRECT], "token_endpoint_auth_method": "none", "client_name": "anon"},
    )
    client_id = registered.json()["client_id"]
    for grant in ("client_credentials", JWT_BEARER):
        refused = await rig.token({"grant_type": grant, "client_id": client_id, "assertion": "a.b.c"})
        assert refused.status_code == 400 and refused.json()["error"] == "unauthorized_client", refused.text
    asked = await rig.http.post(
        "/oauth/register",
        json={"redirect_uris": [REDIRECT], "grant_types": ["authorization_code", "client_credentials"]},
    )
    assert asked.status_code == 400 and asked.json()["error"] == "invalid_client_metadata"


# -- the jwt-bearer grant with an ID-JAG ------------------------------------------------------------------
def jag_form(rig: Rig, assertion: str) -> dict[str, str]:
    return {
        "grant_type": JWT_BEARER,
        "assertion": assertion,
        "client_assertion_type": ASSERTION_TYPE,
        "client_assertion": client_assertion(rig.agent, "agent-1", BASE),
    }


async def test_an_enterprise_user_gets_a_token_through_an_id_jag_and_calls_as_themselves(rig: Rig) -> None:
    assertion = id_jag(rig.idp, IDP, BASE, RESOURCE, "agent-1", scope="mcp:tools")
    response = await rig.token(jag_form(rig, assertion))
    assert response.status_code == 200, response.text
    tokens = response.json()
    assert "refresh_token" not in tokens and tokens["scope"] == "mcp:tools"
    claims = claims_of(tokens["access_token"])
    assert claims["aud"] == RESOURCE and claims["sub"] == "enterprise-user-7"
    seen = caller(await rig.call("Bearer " + tokens["access_token"]))
    assert seen["principal"] == f"{IDP}#enterprise-user-7"
    replayed = await rig.token(jag_form(rig, assertion))
    assert replayed.status_code == 400 and "already used" in replayed.json()["error_description"]


@pytest.mark.parametrize(
    ("change", "why"),
    [
        ({"resource": "https://other.example/mcp"}, "another resource"),
        ({"client_id": "agent-2"}, "another client"),
        ({"aud": "https://other-as.example"}, "audience"),
        ({"typ": "JWT"}, "typ"),
        ({"exp": 1000}, "expired"),
    ],
)
async def test_a_bad_id_jag_is_refused(rig: Rig, change: dict[str, Any], why: str) -> None:
    base = {"aud": BASE, "resource": RESOURCE, "client_id": "agent-1"}
    merged = {**base, **change}
    assertion = id_jag(
        rig.idp, IDP, merged.pop("aud"), merged.pop("resource"), merged.pop("client_id"), **merged
    )  # fmt: skip
    refused = await rig.token(jag_form(rig, assertion))
    assert refused.status_code == 400 and refused.json()["error"] == "invalid_grant", refused.text
    assert why in refused.json()["error_description"]


async def test_an_id_jag_from_an_untrusted_issuer_or_without_client_authentication_is_refused(rig: Rig) -> None:
    untrusted = id_jag(rig.idp, "https://evil.example", BASE, RESOURCE, "agent-1")
    refused = await rig.token(jag_form(rig, untrusted))
    assert refused.status_code == 400 and "not an identity provider this server trusts" in refused.text
    bare = await rig.token({"grant_type": JWT_BEARER, "assertion": id_jag(rig.idp, IDP, BASE, RESOURCE, "agent-1")})
    assert bare.status_code == 401 and bare.json()["error"] == "invalid_client"


async def test_the_sign_in_conditions_apply_to_an_id_jag() -> None:
    kit, agent, idp = rig_for(LAMBDA_MCP_AUTH_UPSTREAM_REQUIRE="groups=mcp-users")
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=kit.asgi()), base_url=BASE) as http:
        rig = Rig(http, kit, agent, idp)
        outsider = await rig.token(jag_form(rig, id_jag(idp, IDP, BASE, RESOURCE, "agent-1", groups=["sales"])))
        assert outsider.status_code == 400 and "sign-in conditions" in outsider.text
        member = await rig.token(jag_form(rig, id_jag(idp, IDP, BASE, RESOURCE, "agent-1", groups=["mcp-users"])))
        assert member.status_code == 200, member.text


# -- DPoP -------------------------------------------------------------------------------------------------
async def test_a_dpop_proof_binds_the_token_and_mcp_then_needs_a_proof_for_each_request(rig: Rig) -> None:
    key = KeyPair()
    response = await rig.client_credentials(dpop=dpop_proof(key, "POST", TOKEN_URL))
    assert response.status_code == 200, response.text
    tokens = response.json()
    assert tokens["token_type"] == "DPoP"
    token = tokens["access_token"]
    assert claims_of(token)["cnf"] == {"jkt": key.thumbprint}
    proof = dpop_proof(key, "POST", RESOURCE, token)
    assert caller(await rig.call("DPoP " + token, dpop=proof))["principal"] == f"client:{BASE}#agent-1"
    refusals = {
        "no proof": await rig.call("DPoP " + token),
        "replayed proof": await rig.call("DPoP " + token, dpop=proof),
        "other URL": await rig.call("DPoP " + token, dpop=dpop_proof(key, "POST", BASE + "/other", token)),
        "other method": await rig.call("DPoP " + token, dpop=dpop_proof(key, "GET", RESOURCE, token)),
        "other key": await rig.call("DPoP " + token, dpop=dpop_proof(KeyPair(), "POST", RESOURCE, token)),
        "as Bearer": await rig.call("Bearer " + token, dpop=dpop_proof(key, "POST", RESOURCE, token)),
        "old proof": await rig.call("DPoP " + token, dpop=dpop_proof(key, "POST", RESOURCE, token, iat=1000)),
    }
    for why, refused in refusals.items():
        assert refused.status_code == 401, why
        challenge = refused.headers["www-authenticate"]
        assert challenge.startswith("DPoP ") and 'algs="ES256' in challenge, (why, challenge)
    assert 'error="invalid_dpop_proof"' in refusals["replayed proof"].headers["www-authenticate"]
    assert 'error="invalid_token"' in refusals["as Bearer"].headers["www-authenticate"]


async def test_a_bad_proof_at_the_token_endpoint_is_refused(rig: Rig) -> None:
    key = KeyPair()
    wrong_url = await rig.client_credentials(dpop=dpop_proof(key, "POST", RESOURCE))
    assert wrong_url.status_code == 400 and wrong_url.json()["error"] == "invalid_dpop_proof"
    proof = dpop_proof(key, "POST", TOKEN_URL)
    assert (await rig.client_credentials(dpop=proof)).status_code == 200
    reused = await rig.client_credentials(dpop=proof)
    assert reused.status_code == 400 and "jti was already used" in reused.json()["error_description"]


async def test_required_dpop_refuses_unbound_tokens_and_token_requests_without_a_proof() -> None:
    kit, agent, idp = rig_for(LAMBDA_MCP_AUTH_DPOP="required")
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=kit.asgi()), base_url=BASE) as http:
        rig = Rig(http, kit, agent, idp)
        unproven = await rig.client_credentials()
        assert unproven.status_code == 400 and unproven.json()["error"] == "invalid_dpop_proof"
        key = KeyPair()
        bound = (await rig.client_credentials(dpop=dpop_proof(key, "POST", TOKEN_URL))).json()["access_token"]
        ok = await rig.call("DPoP " + bound, dpop=dpop_proof(key, "POST", RESOURCE, bound))
        assert caller(ok)["principal"] == f"client:{BASE}#agent-1"
        unbound = await kit.facade.grants.issue("agent-1", ["mcp:tools"], {})
        refused = await rig.call("Bearer " + unbound["access_token"])
        assert refused.status_code == 401 and refused.headers["www-authenticate"].startswith("DPoP ")


async def test_nonces_when_asked_for_are_required_at_both_endpoints() -> None:
    kit, agent, idp = rig_for(LAMBDA_MCP_AUTH_DPOP_NONCE="on")
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=kit.asgi()), base_url=BASE) as http:
        rig = Rig(http, kit, agent, idp)
        key = KeyPair()
        first = await rig.client_credentials(dpop=dpop_proof(key, "POST", TOKEN_URL))
        assert first.status_code == 400 and first.json()["error"] == "use_dpop_nonce"
        nonce = first.headers["dpop-nonce"]
        second = await rig.client_credentials(dpop=dpop_proof(key, "POST", TOKEN_URL, nonce=nonce))
        assert second.status_code == 200, second.text
        token = second.json()["access_token"]
        asked = await rig.call("DPoP " + token, dpop=dpop_proof(key, "POST", RESOURCE, token))
        assert asked.status_code == 401 and 'error="use_dpop_nonce"' in asked.headers["www-authenticate"]
        assert asked.headers["dpop-nonce"]
        forged = await rig.call("DPoP " + token, dpop=dpop_proof(key, "POST", RESOURCE, token, nonce="1.abc"))
        assert forged.status_code == 401
        fine = await rig.call("DPoP " + token, dpop=dpop_proof(key, "POST", RESOURCE, token, nonce=nonce))
        assert caller(fine)["principal"] == f"client:{BASE}#agent-1"


async def test_a_public_clients_refresh_token_is_bound_to_its_dpop_key() -> None:
    kit, agent, idp = rig_for()
    upstream = kit.facade.upstream
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=kit.asgi()), base_url=BASE) as http:
        browser = BrowserRig(http, upstream, kit)
        client = await browser.register()
        code = await browser.code(client["client_id"])
        key = KeyPair()
        form = {"grant_type": "authorization_code", "code": code, "client_id": client["client_id"]}
        form |= {"redirect_uri": REDIRECT, "code_verifier": "v" * 50}
        tokens = await http.post("/oauth/token", data=form, headers={"dpop": dpop_proof(key, "POST", TOKEN_URL)})
        assert tokens.status_code == 200, tokens.text
        assert tokens.json()["token_type"] == "DPoP"
        refresh = {"grant_type": "refresh_token", "refresh_token": tokens.json()["refresh_token"]}
        refresh["client_id"] = client["client_id"]
        unproven = await http.post("/oauth/token", data=refresh)
        assert unproven.status_code == 400 and unproven.json()["error"] == "invalid_dpop_proof"
        other = await http.post(
            "/oauth/token", data=refresh, headers={"dpop": dpop_proof(KeyPair(), "POST", TOKEN_URL)}
        )
        assert other.status_code == 400 and other.json()["error"] == "invalid_dpop_proof"
        same = await http.post("/oauth/token", data=refresh, headers={"dpop": dpop_proof(key, "POST", TOKEN_URL)})
        assert same.status_code == 200, same.text
        assert claims_of(same.json()["access_token"])["cnf"] == {"jkt": key.thumbprint}


# -- the document -----------------------------------------------------------------------------------------
def entry(**fields: Any) -> str:
    base = {"client_id": "a", "token_endpoint_auth_method": "private_key_jwt", "grant_types": ["client_credentials"]}
    return json.dumps([{**base, **fields}])


@pytest.mark.parametrize(
    ("document", "why"),
    [
        (entry(client_id="mcp-x"), "not start with mcp-"),
        (entry(token_endpoint_auth_method="none"), "token_endpoint_auth_method"),
        (entry(grant_types=["authorization_code"]), "grant_types"),
        (entry(jwks={"keys": [{"kty": "EC", "d": "secret"}]}), "public"),
        (entry(token_endpoint_auth_method="client_secret_basic", client_secret_hash="plain"), "SHA-256"),
        ("{}", "JSON list"),
        ("s3://bucket/clients.json", "file:<path>, ssm:<name> or secretsmanager:<arn>"),
    ],
)
def test_an_inline_document_with_a_mistake_stops_the_start(document: str, why: str) -> None:
    from lambda_mcp.config import ConfigError

    with pytest.raises(ConfigError, match=why):
        build_kit(load_app("tests/apps/scoped.py"), facade_settings(LAMBDA_MCP_AUTH_CLIENTS=document), streaming=True)


async def test_an_unreadable_document_is_a_503_not_a_500(tmp_path: Any) -> None:
    missing = f"file:{tmp_path}/nowhere.json"
    kit = build_kit(load_app("tests/apps/scoped.py"), facade_settings(LAMBDA_MCP_AUTH_CLIENTS=missing), streaming=True)
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=kit.asgi()), base_url=BASE) as http:
        refused = await http.post("/oauth/token", data={"grant_type": "client_credentials", "client_id": "agent-1"})
    assert refused.status_code == 503 and refused.json()["error"] == "temporarily_unavailable"


# -- the fuzzer's findings (tests/fuzz/agent_probes.py) ----------------------------------------------------
async def test_a_non_ascii_basic_header_is_a_401_not_a_500(rig: Rig) -> None:
    refused = await rig.http.post(
        "/oauth/token", content=b"grant_type=client_credentials", headers={
            "authorization": b"Basic \xe9",  # type: ignore[dict-item]
            "content-type": "application/x-www-form-urlencoded",
        },
    )  # fmt: skip
    assert refused.status_code == 401 and refused.json()["error"] == "invalid_client"


@pytest.mark.parametrize("jti", ["\ud800surrogate", "x" * 300])
async def test_an_unusable_jti_is_refused_in_assertions_id_jags_and_proofs(rig: Rig, jti: str) -> None:
    assertion = client_assertion(rig.agent, "agent-1", BASE, jti=jti)
    form = {"grant_type": "client_credentials", "client_assertion_type": ASSERTION_TYPE, "client_assertion": assertion}
    assert (await rig.token(form)).status_code == 401
    jag = await rig.token(jag_form(rig, id_jag(rig.idp, IDP, BASE, RESOURCE, "agent-1", jti=jti)))
    assert jag.status_code == 400 and jag.json()["error"] == "invalid_grant"
    proof = await rig.client_credentials(dpop=dpop_proof(KeyPair(), "POST", TOKEN_URL, jti=jti))
    assert proof.status_code == 400 and proof.json()["error"] == "invalid_dpop_proof"


async def test_huge_or_far_expiries_and_bad_htus_and_nonces_are_refused(rig: Rig) -> None:
    huge = client_assertion(rig.agent, "agent-1", BASE, exp=10**400)
    form = {"grant_type": "client_credentials", "client_assertion_type": ASSERTION_TYPE, "client_assertion": huge}
    assert (await rig.token(form)).status_code == 401
    far = await rig.token(jag_form(rig, id_jag(rig.idp, IDP, BASE, RESOURCE, "agent-1", exp=10**12)))
    assert far.status_code == 400 and "expire within" in far.json()["error_description"]
    odd_sub = await rig.token(jag_form(rig, id_jag(rig.idp, IDP, BASE, RESOURCE, "agent-1", sub="\ud800x")))
    assert odd_sub.status_code == 400
    for htu in ("http://127.0.0.1:abc/oauth/token", "http://[::1/oauth/token", "http://127.0.0.1:99999/x"):
        bad = await rig.client_credentials(dpop=dpop_proof(KeyPair(), "POST", htu))
        assert bad.status_code == 400 and bad.json()["error"] == "invalid_dpop_proof", htu
    kit, agent, idp = rig_for(LAMBDA_MCP_AUTH_DPOP_NONCE="on")
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=kit.asgi()), base_url=BASE) as http:
        nonce_rig = Rig(http, kit, agent, idp)
        long_nonce = await nonce_rig.client_credentials(
            dpop=dpop_proof(KeyPair(), "POST", TOKEN_URL, nonce="9" * 5000 + ".x")
        )
        assert long_nonce.status_code == 400 and long_nonce.json()["error"] == "use_dpop_nonce"
