"""Identity for agents and enterprises end to end: machine clients of the authorization facade, with no
browser and no user at the facade, against `lambda-mcp dev tests/apps/scoped.py --lambda --api {http,rest}`
with `LAMBDA_MCP_AUTH=proxy` (in front of npm `oidc-provider`, as in test_facade_e2e.py).

The official TypeScript client (v2, tests/support/ts_machine_client.mjs), on both protocol eras:
- an agent with its own key (`PrivateKeyJwtProvider`: client_credentials, private_key_jwt), registered by
  the operator in `LAMBDA_MCP_AUTH_CLIENTS` with the scope `inventory:read`: tools see it as
  `client:<facade issuer>#agent-1` with that scope only, and a tool needing `inventory:write` refuses it;
- the same agent acting for an enterprise user (`CrossAppAccessProvider`): it exchanges the user's ID token
  at a test enterprise IdP (tests/support/enterprise_idp.py, trusted through
  `LAMBDA_MCP_AUTH_TRUSTED_ISSUERS`) for an ID-JAG and presents it with the jwt-bearer grant; tools see the
  user, `<IdP issuer>#<sub>`;
- the agent with a DPoP key (`DpopSession`): its token is bound to the key, and the raw token replayed
  without a proof, as Bearer, or with a proof for another URL, method, token or key is refused.
Then, over HTTP directly, what the facade must refuse at its token endpoint: ID-JAGs for another resource,
audience or client, expired, untyped, forged, from an untrusted IdP or replayed, and client assertions that
are replayed, for another audience, too long-lived or signed with another key.

One upstream, one IdP and one dev server per front door serve the whole module.
"""

from __future__ import annotations

import hashlib
import json
import secrets
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.support.agent_keys import ASSERTION_TYPE, JWT_BEARER, KeyPair, client_assertion, operator_entry
from tests.support.enterprise_idp import EnterpriseIdP
from tests.support.facade_clients import authorization_server_metadata, verified_claims
from tests.support.processes import ServerProcess, free_port, lambda_mcp_dev
from tests.support.ts_machine import ERAS, run_machine_client
from tests.support.upstream import Upstream, upstream_for_ports

APP = "tests/apps/scoped.py"
APIS = ("http", "rest")
PATHS = {"http": "/mcp", "rest": "/v1/mcp"}
AGENT = "agent-1"
OTHER_AGENT = "agent-2"
BOT = "ci-bot"
CLIENT_CREDENTIALS = "client_credentials"
ID_JAG_PROFILE = "urn:ietf:params:oauth:grant-profile:id-jag"
MODERN = "2026-07-28"


@pytest.fixture(scope="module")
def ports() -> dict[str, int]:
    return {api: free_port() for api in APIS}


@pytest.fixture(scope="module")
def upstream(ports: dict[str, int], tmp_path_factory: pytest.TempPathFactory) -> Iterator[Upstream]:
    yield from upstream_for_ports(ports, tmp_path_factory.mktemp("upstream") / "oidc.log")


@pytest.fixture(scope="module")
def idp() -> Iterator[EnterpriseIdP]:
    started = EnterpriseIdP(client_id=AGENT)
    yield started
    started.stop()


@pytest.fixture(scope="module")
def untrusted_idp() -> Iterator[EnterpriseIdP]:
    """An IdP the facade was not told to trust."""
    started = EnterpriseIdP(client_id=AGENT)
    yield started
    started.stop()


@pytest.fixture(scope="module")
def keys() -> dict[str, KeyPair]:
    return {AGENT: KeyPair(), OTHER_AGENT: KeyPair(), "stranger": KeyPair()}


@pytest.fixture(scope="module")
def bot_secret() -> str:
    return secrets.token_urlsafe(32)


@pytest.fixture(scope="module", params=APIS)
def server(
    request: pytest.FixtureRequest,
    ports: dict[str, int],
    upstream: Upstream,
    idp: EnterpriseIdP,
    keys: dict[str, KeyPair],
    bot_secret: str,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[ServerProcess]:
    api: str = request.param
    port, path = ports[api], PATHS[api]
    clients = [
        operator_entry(AGENT, keys[AGENT], "inventory:read"),
        operator_entry(OTHER_AGENT, keys[OTHER_AGENT], "inventory:read"),
        {
            "client_id": BOT,
            "client_name": "CI bot",
            "token_endpoint_auth_method": "client_secret_basic",
            "client_secret_hash": hashlib.sha256(bot_secret.encode()).hexdigest(),
            "grant_types": [CLIENT_CREDENTIALS],
            "scope": "inventory:read inventory:write",
        },
    ]
    env = {
        "LAMBDA_MCP_AUTH": "proxy",
        "LAMBDA_MCP_AUTH_AUDIENCE": f"http://127.0.0.1:{port}{path}",
        "LAMBDA_MCP_AUTH_CLIENTS": json.dumps(clients),
        "LAMBDA_MCP_AUTH_TRUSTED_ISSUERS": idp.issuer,
        "LAMBDA_MCP_AUTH_DPOP": "optional",
        **upstream.facade_env(),
    }
    log = tmp_path_factory.mktemp(f"agents-{api}") / "server.log"
    process = lambda_mcp_dev(
        APP, through_lambda=True, env=env, port=port, path=path, log=log, extra_args=["--api", api]
    )
    yield process
    process.stop()


def issuer_of(server: ServerProcess) -> str:
    """The facade's issuer: the MCP URL's base (`http://127.0.0.1:<port>`, or with the REST API's `/v1`)."""
    return server.url.rsplit("/mcp", 1)[0]


def machine_config(server: ServerProcess, keys: dict[str, KeyPair], era: str, **more: Any) -> dict[str, Any]:
    return {
        "url": server.url,
        "era": era,
        "issuer": issuer_of(server),
        "clientId": AGENT,
        "privateKey": keys[AGENT].pem,
        "tool": "whoami",
        **more,
    }


def check_era(report: dict[str, Any], era: str) -> None:
    assert report["era"]["negotiated"] == era, report["era"]
    assert report["era"]["kind"] == ("modern" if era == MODERN else "legacy"), report["era"]


def token_posts(report: dict[str, Any], url: str) -> list[dict[str, Any]]:
    return [entry for entry in report["tokenRequests"] if entry["url"] == url]


# -- the TypeScript client, on both eras ------------------------------------------------------------------------


@pytest.mark.parametrize("era", ERAS)
def test_an_agent_with_its_own_key_gets_its_scopes_and_no_more(
    server: ServerProcess, keys: dict[str, KeyPair], era: str
) -> None:
    issuer = issuer_of(server)
    config = machine_config(server, keys, era, deniedTool="restock", deniedArguments={"item": "widget"})
    report = run_machine_client("cc", config)
    check_era(report, era)
    assert json.loads(report["text"]) == {"principal": f"client:{issuer}#{AGENT}", "scopes": ["inventory:read"]}
    assert "whoami" in report["tools"] and "restock" not in report["tools"]  # the list shows what it may use

    # restock needs inventory:write, which the operator did not give the agent: 403 insufficient_scope. The
    # SDK reads the challenge from WWW-Authenticate; behind a REST API, which renames that header in the
    # function's answers, it sees a plain 403 (the challenge is still in the renamed header and the body).
    assert report["denied"] is not None, report.get("deniedResult")
    refusal = report["mcpRequests"][-1]
    assert refusal["status"] == 403 and 'error="insufficient_scope"' in refusal["challenge"], refusal
    assert 'scope="inventory:write"' in refusal["challenge"], refusal
    if server.url.endswith("/v1/mcp"):
        assert (report["denied"]["name"], report["denied"]["status"]) == ("SdkHttpError", 403), report["denied"]
    else:
        assert report["denied"]["name"] == "InsufficientScopeError", report["denied"]
        assert "inventory:write" in str(report["denied"]["requiredScope"]).split(), report["denied"]

    # One token request: client_credentials with an RFC 7523 assertion (no secret), answered with a Bearer
    # token carrying the client's scope only (whatever it asked for), and no refresh token.
    (posted,) = token_posts(report, f"{issuer}/oauth/token")
    assert posted["grant_type"] == CLIENT_CREDENTIALS and posted["status"] == 200, posted
    assert posted["client_assertion_type"] == ASSERTION_TYPE and posted["client_assertion"] is True
    assert "client_secret" not in posted and not posted["basic"] and not posted["dpop"]
    assert posted["resource"] == server.url
    assert report["tokens"]["token_type"].lower() == "bearer" and report["tokens"]["refresh_token"] is False
    assert report["tokens"]["scope"].split() == ["inventory:read"]
    assert {request["scheme"] for request in report["mcpRequests"] if request["scheme"]} == {"Bearer"}

    claims = verified_claims(report["tokens"]["access_token"], authorization_server_metadata(issuer), server.url)
    assert claims.get("scope", "").split() == ["inventory:read"] and "cnf" not in claims


@pytest.mark.parametrize("era", ERAS)
def test_an_agent_acts_for_an_enterprise_user_with_an_id_jag(
    server: ServerProcess, keys: dict[str, KeyPair], idp: EnterpriseIdP, era: str
) -> None:
    issuer, user = issuer_of(server), f"erin-{era}"
    idp_config = {
        "url": idp.issuer,
        "clientId": AGENT,
        "clientSecret": idp.client_secret,
        "idToken": idp.id_token(user),
    }
    issued_before = len(idp.issued)
    report = run_machine_client("idjag", machine_config(server, keys, era, idp=idp_config))
    check_era(report, era)
    assert json.loads(report["text"])["principal"] == f"{idp.issuer}#{user}"

    # The SDK discovered the facade, asked the IdP for an ID-JAG for it and this resource, then presented it.
    (context,) = report["idjag"]["contexts"]
    assert context["authorizationServerUrl"] == issuer and context["resourceUrl"] == server.url
    (exchange,) = token_posts(report, idp.token_endpoint)
    assert exchange["grant_type"] == "urn:ietf:params:oauth:grant-type:token-exchange"
    assert exchange["requested_token_type"] == "urn:ietf:params:oauth:token-type:id-jag"
    assert exchange["audience"] == issuer and exchange["resource"] == server.url and exchange["status"] == 200
    (jag_claims,) = idp.issued[issued_before:]
    assert (jag_claims["sub"], jag_claims["aud"], jag_claims["client_id"]) == (user, issuer, AGENT)
    assert jag_claims["resource"] == server.url

    (grant,) = token_posts(report, f"{issuer}/oauth/token")
    assert grant["grant_type"] == JWT_BEARER and grant["assertion"] is True and grant["status"] == 200, grant
    assert grant["client_assertion_type"] == ASSERTION_TYPE and grant["client_assertion"] is True
    assert not grant["basic"] and "client_secret" not in grant  # private_key_jwt, not the provider's default
    assert report["tokens"]["token_type"].lower() == "bearer" and report["tokens"]["refresh_token"] is False
    assert "GET /oauth2/jwks" in idp.requests  # the facade checked the ID-JAG with the IdP's published keys

    claims = verified_claims(report["tokens"]["access_token"], authorization_server_metadata(issuer), server.url)
    shown = json.loads(report["text"])["scopes"]
    assert shown == sorted(str(claims.get("scope", "")).split())  # the tool sees the token's scopes
    # The SDK asked for every scope the resource lists, and the ID-JAG carried them all; the token has the
    # one the operator gave the client.
    assert exchange["scope"].split() == ["admin", "inventory:read", "inventory:write"]
    assert shown == ["inventory:read"]


@pytest.mark.parametrize("era", ERAS)
def test_a_dpop_bound_token_works_only_with_fresh_proofs_of_its_key(
    server: ServerProcess, keys: dict[str, KeyPair], era: str
) -> None:
    issuer = issuer_of(server)
    report = run_machine_client("dpop", machine_config(server, keys, era))
    check_era(report, era)
    assert json.loads(report["text"])["principal"] == f"client:{issuer}#{AGENT}"
    assert report["tokens"]["token_type"] == "DPoP" and report["tokens"]["refresh_token"] is False
    (posted,) = token_posts(report, f"{issuer}/oauth/token")
    assert posted["dpop"] and posted["answer"]["token_type"] == "DPoP"
    authenticated = [request for request in report["mcpRequests"] if request["scheme"]]
    assert authenticated and all(request["scheme"] == "DPoP" and request["dpop"] for request in authenticated)

    token, proofs = report["tokens"]["access_token"], report["dpop"]["proofs"]
    claims = verified_claims(token, authorization_server_metadata(issuer), server.url)
    assert claims["cnf"] == {"jkt": report["dpop"]["thumbprint"]}

    def whoami(authorization: str, proof: str | None = None) -> httpx.Response:
        return modern_call(server.url, "whoami", {"authorization": authorization, **({"dpop": proof} if proof else {})})

    accepted = whoami(f"DPoP {token}", proofs["valid"])
    assert accepted.status_code == 200, accepted.text
    assert json.loads(result_text(accepted))["principal"] == f"client:{issuer}#{AGENT}"
    refused = {
        "the same proof again": whoami(f"DPoP {token}", proofs["valid"]),
        "no proof": whoami(f"DPoP {token}"),
        "as Bearer": whoami(f"Bearer {token}"),
        "as Bearer with a proof": whoami(f"Bearer {token}", proofs["spare"]),
        "a proof for another URL": whoami(f"DPoP {token}", proofs["otherUrl"]),
        "a proof for another method": whoami(f"DPoP {token}", proofs["otherMethod"]),
        "a proof without ath": whoami(f"DPoP {token}", proofs["noAth"]),
        "a proof by another key": whoami(f"DPoP {token}", proofs["otherKey"]),
    }
    statuses = {case: response.status_code for case, response in refused.items()}
    assert statuses == dict.fromkeys(refused, 401), {case: r.text[:200] for case, r in refused.items()}
    # Each with a DPoP challenge (RFC 9449 §7.1), but for a REST API's Bearer refusals: its authorizer turns
    # those away before the function, with the gateway's fixed Bearer challenge.
    gateway = {"as Bearer", "as Bearer with a proof"} if server.url.endswith("/v1/mcp") else set()
    challenges = {case: challenge_of(response) for case, response in refused.items() if case not in gateway}
    assert all(challenge.startswith("DPoP ") for challenge in challenges.values()), challenges


# -- the token endpoint, directly --------------------------------------------------------------------------------


def test_the_facade_advertises_the_machine_grants(server: ServerProcess) -> None:
    metadata = authorization_server_metadata(issuer_of(server))
    assert {CLIENT_CREDENTIALS, JWT_BEARER} <= set(metadata["grant_types_supported"])
    assert "private_key_jwt" in metadata["token_endpoint_auth_methods_supported"]
    assert "ES256" in metadata["dpop_signing_alg_values_supported"]
    assert ID_JAG_PROFILE in metadata["authorization_grant_profiles_supported"]


def test_the_token_endpoint_refuses_unfit_id_jags(
    server: ServerProcess, keys: dict[str, KeyPair], idp: EnterpriseIdP, untrusted_idp: EnterpriseIdP
) -> None:
    issuer, resource = issuer_of(server), server.url
    fit: dict[str, Any] = {"audience": issuer, "resource": resource, "client_id": AGENT}

    def present(jag: str, client: str = AGENT) -> httpx.Response:
        form = {"grant_type": JWT_BEARER, "assertion": jag, **assertion_fields(keys[client], client, issuer)}
        return httpx.post(f"{issuer}/oauth/token", data=form, timeout=15)

    valid = idp.mint_id_jag(sub="frank", **fit)
    first = present(valid)
    assert first.status_code == 200, first.text
    tokens = first.json()
    assert tokens["token_type"].lower() == "bearer" and "refresh_token" not in tokens
    called = modern_call(resource, "whoami", {"authorization": f"Bearer {tokens['access_token']}"})
    assert json.loads(result_text(called))["principal"] == f"{idp.issuer}#frank"

    unfit = {
        "replayed": valid,
        "for another resource": idp.mint_id_jag(**{**fit, "resource": resource + "-other"}),
        "for another audience": idp.mint_id_jag(**{**fit, "audience": idp.issuer}),
        "for another client": idp.mint_id_jag(**{**fit, "client_id": OTHER_AGENT}),
        "expired": idp.mint_id_jag(**fit, lifetime=-120),
        "without its typ": idp.mint_id_jag(**fit, typ=None),
        "typed as a plain JWT": idp.mint_id_jag(**fit, typ="JWT"),
        "without sub": idp.mint_id_jag(**fit, sub=None),
        "without jti": idp.mint_id_jag(**fit, jti=None),
        "signed with an unpublished key": idp.mint_id_jag(**fit, foreign_key=True),
        "from an untrusted IdP": untrusted_idp.mint_id_jag(**fit),
        "claiming the trusted issuer, signed by another IdP": untrusted_idp.mint_id_jag(**fit, iss=idp.issuer),
    }
    answers = {case: present(jag) for case, jag in unfit.items()}
    answers["presented by another client"] = present(idp.mint_id_jag(**fit), client=OTHER_AGENT)
    errors = {case: (response.status_code, response.json().get("error")) for case, response in answers.items()}
    assert errors == dict.fromkeys(answers, (400, "invalid_grant")), errors


def test_the_token_endpoint_refuses_unfit_client_authentication(
    server: ServerProcess, keys: dict[str, KeyPair], bot_secret: str
) -> None:
    issuer = issuer_of(server)
    token_endpoint = f"{issuer}/oauth/token"

    def ask(fields: dict[str, str], auth: tuple[str, str] | None = None, scope: str = "") -> httpx.Response:
        form = {"grant_type": CLIENT_CREDENTIALS, "resource": server.url, **({"scope": scope} if scope else {})}
        return httpx.post(token_endpoint, data={**form, **fields}, auth=auth, timeout=15)

    fields = assertion_fields(keys[AGENT], AGENT, token_endpoint)  # the token endpoint is an accepted aud too
    first = ask(fields, scope="inventory:read inventory:write admin")
    assert first.status_code == 200, first.text
    assert first.json()["scope"].split() == ["inventory:read"] and "refresh_token" not in first.json()

    bot = ask({}, auth=(BOT, bot_secret))
    assert bot.status_code == 200, bot.text
    assert sorted(bot.json()["scope"].split()) == ["inventory:read", "inventory:write"]
    restocked = modern_call(
        server.url, "restock", {"authorization": f"Bearer {bot.json()['access_token']}"}, {"item": "widget"}
    )
    assert result_text(restocked) == f"restocked widget for client:{issuer}#{BOT}"

    refused = {
        "a replayed assertion": ask(fields),
        "an assertion for another audience": ask(assertion_fields(keys[AGENT], AGENT, server.url)),
        "an assertion living ten minutes": ask(
            assertion_fields(keys[AGENT], AGENT, issuer, exp=int(time.time()) + 600)
        ),
        "an expired assertion": ask(assertion_fields(keys[AGENT], AGENT, issuer, exp=int(time.time()) - 120)),
        "an assertion signed with another key": ask(assertion_fields(keys["stranger"], AGENT, issuer)),
        "an assertion of an unknown client": ask(assertion_fields(keys["stranger"], "stranger", issuer)),
        "an assertion with iss and sub apart": ask(assertion_fields(keys[AGENT], AGENT, issuer, sub=OTHER_AGENT)),
        "the bot's wrong secret": ask({}, auth=(BOT, bot_secret + "x")),
        "the agent by a secret": ask({}, auth=(AGENT, bot_secret)),
    }
    errors = {case: (response.status_code, response.json().get("error")) for case, response in refused.items()}
    assert errors == dict.fromkeys(refused, (401, "invalid_client")), errors


# -- helpers -------------------------------------------------------------------------------------------------


def assertion_fields(keys: KeyPair, client_id: str, audience: str, **claims: Any) -> dict[str, str]:
    """RFC 7523 client authentication: a fresh assertion signed with `keys` (`claims` override or add)."""
    return {
        "client_assertion_type": ASSERTION_TYPE,
        "client_assertion": client_assertion(keys, client_id, audience, **claims),
    }


def modern_call(
    url: str, tool: str, headers: dict[str, str], arguments: dict[str, Any] | None = None
) -> httpx.Response:
    """A 2026-07-28 `tools/call` of `tool` over plain HTTP with `headers` (the credentials)."""
    meta = {"io.modelcontextprotocol/protocolVersion": MODERN, "io.modelcontextprotocol/clientCapabilities": {}}
    message = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": tool, "arguments": arguments or {}, "_meta": meta},
    }
    routing = {
        "content-type": "application/json",
        "accept": "application/json, text/event-stream",
        "mcp-protocol-version": MODERN,
        "mcp-method": "tools/call",
        "mcp-name": tool,
    }
    return httpx.post(url, content=json.dumps(message), headers={**routing, **headers}, timeout=15)


def challenge_of(response: httpx.Response) -> str:
    """A refusal's challenge: `WWW-Authenticate`, or (a REST API renames the function's) the renamed header."""
    headers = response.headers
    return str(headers.get("www-authenticate") or headers.get("x-amzn-remapped-www-authenticate") or "")


def result_text(response: httpx.Response) -> str:
    """The text of a tool result in a JSON or an SSE answer."""
    assert response.status_code == 200, (response.status_code, response.text[:500])
    if response.headers.get("content-type", "").startswith("text/event-stream"):
        data = [line[5:].strip() for line in response.text.splitlines() if line.startswith("data:")]
        body = json.loads(data[-1])
    else:
        body = response.json()
    assert "result" in body, body
    return str(body["result"]["content"][0]["text"])
