"""The facade's upstream side against a small OpenID provider on loopback: discovery, the code exchange
with the facade's client credentials, the ID token's checks (signature, audience, nonce), userinfo, a
secret from Secrets Manager, and a failing upstream answered to the client, never with a 5xx."""

from __future__ import annotations

import base64
import contextlib
import json
import secrets
import time
from collections.abc import AsyncIterator, Iterator
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import ec

from lambda_mcp.facade.upstream import Upstream, UpstreamError
from lambda_mcp.kit import Stores, build_kit
from lambda_mcp.loader import load_app
from tests.support.loopback import LoopbackServer, respond
from tests.unit.test_facade_http import BASE, REDIRECT, Rig, query, settings

pytestmark = pytest.mark.anyio
CLIENT_ID, SECRET = "facade", "s3cret"


class Provider:
    """Discovery, JWKS, an authorize endpoint that signs `?login=` in at once, token and userinfo."""

    def __init__(self) -> None:
        self.key = ec.generate_private_key(ec.SECP256R1())
        self.server = LoopbackServer(self._handle, ("GET", "POST"))
        self.url = self.server.url
        self.reset()

    def reset(self) -> None:
        self.codes: dict[str, tuple[str, str]] = {}  # code: (user, nonce)
        self.token_requests: list[tuple[str, dict[str, str]]] = []
        self.id_token_overrides: dict[str, Any] = {}
        self.with_id_token = True
        self.token_status = 200

    def _reply(self, handler: BaseHTTPRequestHandler, status: int, document: dict[str, Any]) -> None:
        respond(handler, status, json.dumps(document).encode())

    def _handle(self, handler: BaseHTTPRequestHandler) -> None:
        path, _, raw = handler.path.partition("?")
        if path == "/.well-known/openid-configuration":
            endpoints = {name: f"{self.url}/{name}" for name in ("authorize", "token", "userinfo", "jwks")}
            self._reply(
                handler,
                200,
                {"issuer": self.url, **{f"{k}_endpoint": v for k, v in endpoints.items()}}
                | {"jwks_uri": endpoints["jwks"], "authorization_endpoint": endpoints["authorize"]},
            )
        elif path == "/jwks":
            jwk = json.loads(jwt.algorithms.ECAlgorithm.to_jwk(self.key.public_key()))
            self._reply(handler, 200, {"keys": [{**jwk, "kid": "k1", "use": "sig", "alg": "ES256"}]})
        elif path == "/authorize":
            params = {k: v[0] for k, v in parse_qs(raw).items()}
            code = secrets.token_urlsafe(8)
            self.codes[code] = (params.get("login", "alice"), params["nonce"])
            handler.send_response(302)
            handler.send_header("Location", f"{params['redirect_uri']}?code={code}&state={params['state']}")
            handler.end_headers()
        elif path == "/token":
            length = int(handler.headers.get("Content-Length", "0"))
            form = {k: v[0] for k, v in parse_qs(handler.rfile.read(length).decode()).items()}
            self.token_requests.append((handler.headers.get("Authorization", ""), form))
            user, nonce = self.codes.pop(form.get("code", ""), ("", ""))
            if self.token_status != 200 or not user:
                self._reply(handler, self.token_status if self.token_status != 200 else 400, {"error": "invalid_grant"})
                return
            now = int(time.time())
            claims = {"iss": self.url, "aud": CLIENT_ID, "sub": user, "nonce": nonce, "iat": now, "exp": now + 60}
            id_token = jwt.encode(claims | self.id_token_overrides, self.key, "ES256", headers={"kid": "k1"})
            tokens = {"access_token": f"at-{user}", "token_type": "Bearer"}
            self._reply(handler, 200, tokens | ({"id_token": id_token} if self.with_id_token else {}))
        elif path == "/userinfo":
            user = handler.headers.get("Authorization", "").removeprefix("Bearer at-")
            self._reply(handler, 200, {"sub": user})
        else:
            self._reply(handler, 404, {})


@pytest.fixture(scope="module")
def served() -> Iterator[Provider]:
    provider = Provider()
    yield provider
    provider.server.stop()


@pytest.fixture
def provider(served: Provider) -> Provider:
    served.reset()
    return served


def _settings(provider: Provider, **extra: str) -> Any:
    return settings(LAMBDA_MCP_AUTH_UPSTREAM_ISSUER=provider.url, **extra)


def _kit(provider: Provider) -> Any:
    app = load_app("tests/apps/scoped.py")
    return build_kit(app, _settings(provider), streaming=True, local=True, stores=Stores.memory())


def _sign_in(provider: Provider, upstream: Upstream, user: str = "alice") -> tuple[dict[str, Any], str]:
    nonce = secrets.token_urlsafe(8)
    url = upstream.authorize_url("state-1", "c" * 43, nonce)
    response = httpx.get(url + f"&login={user}")
    code = query(response.headers["location"])["code"]
    return upstream.exchange(code, "v" * 50), nonce


async def test_the_code_is_exchanged_with_the_facades_client_and_the_id_token_names_the_user(
    provider: Provider,
) -> None:
    upstream = Upstream(_settings(provider), BASE + "/oauth/callback")
    url = upstream.authorize_url("state-1", "c" * 43, "n-1")
    found = query(url)
    assert url.startswith(provider.url + "/authorize?")
    assert found | {"nonce": "n"} == {
        "response_type": "code",
        "client_id": CLIENT_ID,
        "redirect_uri": BASE + "/oauth/callback",
        "scope": "openid mcp:tools",
        "state": "state-1",
        "nonce": "n",
        "code_challenge": "c" * 43,
        "code_challenge_method": "S256",
    }
    tokens, nonce = _sign_in(provider, upstream, "bob")
    assert (await upstream.identity(tokens, nonce))["sub"] == "bob"
    authorization, form = provider.token_requests[-1]
    assert authorization == "Basic " + base64.b64encode(f"{CLIENT_ID}:{SECRET}".encode()).decode()
    assert form["code_verifier"] == "v" * 50 and form["redirect_uri"] == BASE + "/oauth/callback"


@pytest.mark.parametrize(
    "override", [{"nonce": "other"}, {"aud": "someone-else"}, {"exp": 1}, {"iss": "https://x.example"}]
)
async def test_an_id_token_that_fails_a_check_names_no_one(provider: Provider, override: dict[str, Any]) -> None:
    upstream = Upstream(_settings(provider), BASE + "/oauth/callback")
    provider.id_token_overrides = override
    tokens, nonce = _sign_in(provider, upstream)
    with pytest.raises(UpstreamError):
        await upstream.identity(tokens, nonce)


async def test_without_an_id_token_the_user_comes_from_userinfo(provider: Provider) -> None:
    upstream = Upstream(_settings(provider), BASE + "/oauth/callback")
    provider.with_id_token = False
    tokens, nonce = _sign_in(provider, upstream, "carol")
    assert (await upstream.identity(tokens, nonce))["sub"] == "carol"


async def test_the_client_secret_can_come_from_secrets_manager(provider: Provider) -> None:
    from moto import mock_aws

    with mock_aws():
        import boto3

        arn = boto3.client("secretsmanager", region_name="us-east-1").create_secret(
            Name="facade", SecretString="fromsm"
        )["ARN"]
        env = {"LAMBDA_MCP_AUTH_UPSTREAM_CLIENT_SECRET": "", "LAMBDA_MCP_AUTH_UPSTREAM_CLIENT_SECRET_ARN": arn}
        upstream = Upstream(_settings(provider, **env), BASE + "/oauth/callback")
        _sign_in(provider, upstream)
    assert provider.token_requests[-1][0] == "Basic " + base64.b64encode(f"{CLIENT_ID}:fromsm".encode()).decode()


@contextlib.asynccontextmanager
async def _sent_upstream(provider: Provider) -> AsyncIterator[tuple[httpx.AsyncClient, Rig, str, str]]:
    """A kit with the facade in front of `provider`, a registered client that approved consent: the facade's
    client, the rig, the client id, and where the facade sends the browser (the provider's authorize)."""
    kit = build_kit(
        load_app("tests/apps/scoped.py"), _settings(provider), streaming=True, local=True, stores=Stores.memory()
    )
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=kit.asgi()), base_url=BASE) as http:
        rig = Rig(http, None, kit)  # type: ignore[arg-type]
        client = await rig.register()
        to_upstream = await rig.consent(await rig.authorize(client["client_id"]))
        yield http, rig, client["client_id"], to_upstream.headers["location"]


async def test_a_failing_upstream_sends_the_client_an_error_not_a_5xx(provider: Provider) -> None:
    async with _sent_upstream(provider) as (http, _rig, _client_id, location):
        signed_in = httpx.get(location)  # the provider signs alice in at once
        callback = urlsplit(signed_in.headers["location"])
        provider.token_status = 500
        back = await http.get("/oauth/callback?" + callback.query)
    assert back.status_code == 302 and back.headers["location"].startswith(REDIRECT + "?")
    assert query(back.headers["location"])["error"] == "temporarily_unavailable"
    assert "500" not in back.headers["location"] and "invalid_grant" not in back.headers["location"]


async def test_a_whole_sign_in_through_the_real_upstream_client(provider: Provider) -> None:
    async with _sent_upstream(provider) as (http, rig, client_id, location):
        signed_in = httpx.get(location + "&login=dave")
        back = await http.get("/oauth/callback?" + urlsplit(signed_in.headers["location"]).query)
        code = query(back.headers["location"])["code"]
        tokens = (await rig.exchange(client_id, code)).json()
    assert jwt.decode(tokens["access_token"], options={"verify_signature": False})["sub"] == "dave"
