"""The stand-in third-party OAuth provider behaves like one: code + PKCE exchange, rotating refresh tokens
that refuse reuse, expiring and revocable access tokens, a per-user API, denial, and refusal of a redirect
URI the client never registered."""

from __future__ import annotations

import re
from collections.abc import Iterator
from html import unescape
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest

from tests.support.oauth_provider import OAuthProvider, pkce_pair

CLIENT, SECRET = "tool-app", "tool-secret"
CALLBACK = "http://127.0.0.1:9/callback"


_http = httpx.Client(trust_env=False, timeout=5)  # one for the module: a new one per request costs an SSL context


@pytest.fixture(scope="module", autouse=True)
def _close_http() -> Iterator[None]:
    yield
    _http.close()


@pytest.fixture
def provider() -> Iterator[OAuthProvider]:
    with OAuthProvider({CLIENT: (SECRET, [CALLBACK])}) as started:
        yield started


def _callback(location: str) -> dict[str, str]:
    assert location.startswith(CALLBACK + "?"), location
    return {name: values[0] for name, values in parse_qs(urlsplit(location).query).items()}


def _sign_in(provider: OAuthProvider, user: str, **extra: str) -> tuple[str, str]:
    """The code and verifier of a completed authorization by `user`."""
    verifier, challenge = pkce_pair()
    url = provider.authorize_url(CLIENT, CALLBACK, state=f"st-{user}", code_challenge=challenge, **extra)
    answer = _callback(provider.authorize_as(url, user))
    assert answer["state"] == f"st-{user}"
    return answer["code"], verifier


def _token(provider: OAuthProvider, form: dict[str, str], *, basic: bool = False) -> httpx.Response:
    if basic:
        return _http.post(provider.token_endpoint, data=form, auth=(CLIENT, SECRET))
    return _http.post(provider.token_endpoint, data={**form, "client_id": CLIENT, "client_secret": SECRET})


def _exchange(provider: OAuthProvider, code: str, verifier: str, *, basic: bool = False) -> httpx.Response:
    form = {"grant_type": "authorization_code", "code": code, "redirect_uri": CALLBACK, "code_verifier": verifier}
    return _token(provider, form, basic=basic)


def _refresh(provider: OAuthProvider, refresh_token: str) -> httpx.Response:
    return _token(provider, {"grant_type": "refresh_token", "refresh_token": refresh_token})


def _me(provider: OAuthProvider, access_token: str) -> httpx.Response:
    return _http.get(provider.api_url, headers={"authorization": f"Bearer {access_token}"})


def _tokens(response: httpx.Response) -> dict[str, Any]:
    assert response.status_code == 200, response.text
    document: dict[str, Any] = response.json()
    return document


def test_code_exchange_with_pkce_gives_each_user_their_own_api(provider: OAuthProvider) -> None:
    code, verifier = _sign_in(provider, "alice", scope="repo read:user", prompt="consent")
    request = provider.authorize_requests[-1]
    assert request["code_challenge_method"] == "S256" and request["prompt"] == "consent"
    assert request["scope"] == "repo read:user" and request["login"] == "alice"

    alice = _tokens(_exchange(provider, code, verifier))
    assert alice["token_type"] == "bearer" and alice["expires_in"] == 3600 and alice["scope"] == "repo read:user"
    assert alice["refresh_token"]
    assert provider.token_requests[-1]["auth_method"] == "client_secret_post"
    assert "client_secret" not in provider.token_requests[-1]

    code, verifier = _sign_in(provider, "bob")
    bob = _tokens(_exchange(provider, code, verifier, basic=True))
    assert provider.token_requests[-1]["auth_method"] == "client_secret_basic"

    assert _me(provider, alice["access_token"]).json() == {
        "login": "alice",
        "data": "repos of alice",
        "scope": "repo read:user",
    }
    assert _me(provider, bob["access_token"]).json()["data"] == "repos of bob"
    assert _me(provider, "made-up").status_code == 401
    assert [call["user"] for call in provider.api_calls] == ["alice", "bob", None]
    assert provider.code_exchanges == {"alice": 1, "bob": 1}


def test_a_code_is_single_use_and_bound_to_verifier_and_redirect(provider: OAuthProvider) -> None:
    code, verifier = _sign_in(provider, "alice")
    wrong = _exchange(provider, code, pkce_pair()[0])
    assert wrong.status_code == 400 and wrong.json()["error"] == "invalid_grant"
    assert _exchange(provider, code, verifier).status_code == 400  # spent by the failed attempt

    code, verifier = _sign_in(provider, "alice")
    form = {"grant_type": "authorization_code", "code": code, "code_verifier": verifier}
    assert _token(provider, {**form, "redirect_uri": "http://127.0.0.1:9/other"}).status_code == 400

    code, verifier = _sign_in(provider, "alice")
    bad_secret = _http.post(provider.token_endpoint, data={"client_id": CLIENT, "client_secret": "nope", **form})
    assert bad_secret.status_code == 401 and bad_secret.json()["error"] == "invalid_client"
    assert _tokens(_exchange(provider, code, verifier))  # a refused client did not spend the code
    assert _exchange(provider, code, verifier).json()["error"] == "invalid_grant"
    assert provider.code_exchanges["alice"] == 1


def test_refresh_rotates_and_refuses_reuse(provider: OAuthProvider) -> None:
    code, verifier = _sign_in(provider, "alice")
    first = _tokens(_exchange(provider, code, verifier))
    second = _tokens(_refresh(provider, first["refresh_token"]))
    assert second["refresh_token"] != first["refresh_token"]
    assert second["access_token"] != first["access_token"]
    reused = _refresh(provider, first["refresh_token"])
    assert reused.status_code == 400 and reused.json()["error"] == "invalid_grant"
    third = _tokens(_refresh(provider, second["refresh_token"]))  # no revocation by default
    assert _me(provider, third["access_token"]).status_code == 200
    assert provider.refreshes == {"alice": 2} and provider.reuses == {"alice": 1}


def test_reuse_revokes_the_grant_when_asked() -> None:
    with OAuthProvider({CLIENT: (SECRET, [CALLBACK])}, revoke_on_reuse=True) as provider:
        code, verifier = _sign_in(provider, "alice")
        first = _tokens(_exchange(provider, code, verifier))
        second = _tokens(_refresh(provider, first["refresh_token"]))
        assert _refresh(provider, first["refresh_token"]).status_code == 400
        assert _me(provider, second["access_token"]).status_code == 401
        assert _refresh(provider, second["refresh_token"]).json()["error"] == "invalid_grant"


def test_access_tokens_expire_and_a_refresh_brings_a_fresh_one(provider: OAuthProvider) -> None:
    code, verifier = _sign_in(provider, "alice")
    tokens = _tokens(_exchange(provider, code, verifier))
    assert _me(provider, tokens["access_token"]).status_code == 200
    provider.expire_all()
    expired = _me(provider, tokens["access_token"])
    assert expired.status_code == 401 and "invalid_token" in expired.headers["www-authenticate"]

    provider.access_seconds = 0  # tokens issued from now on are born expired
    stillborn = _tokens(_refresh(provider, tokens["refresh_token"]))
    assert stillborn["expires_in"] == 0 and _me(provider, stillborn["access_token"]).status_code == 401
    provider.access_seconds = 1
    fresh = _tokens(_refresh(provider, stillborn["refresh_token"]))
    assert fresh["expires_in"] == 1 and _me(provider, fresh["access_token"]).status_code == 200


def test_revoking_a_user_drops_their_tokens_only(provider: OAuthProvider) -> None:
    alice = _tokens(_exchange(provider, *_sign_in(provider, "alice")))
    bob = _tokens(_exchange(provider, *_sign_in(provider, "bob")))
    assert provider.revoke("alice") == 1
    assert _me(provider, alice["access_token"]).status_code == 401
    assert _refresh(provider, alice["refresh_token"]).json()["error"] == "invalid_grant"
    assert _me(provider, bob["access_token"]).status_code == 200

    revoked = _http.post(provider.revoke_endpoint, data={"token": bob["refresh_token"]}, auth=(CLIENT, SECRET))
    assert revoked.status_code == 200
    assert _me(provider, bob["access_token"]).status_code == 401


def test_deny_and_the_login_form(provider: OAuthProvider) -> None:
    _, challenge = pkce_pair()
    url = provider.authorize_url(CLIENT, CALLBACK, state="s1", code_challenge=challenge)
    assert _callback(provider.authorize_as(url, "alice", deny=True)) == {
        "error": "access_denied",
        "error_description": "the user denied the request",
        "state": "s1",
    }

    page = _http.get(url)
    assert page.status_code == 200 and '<form method="post" action="/authorize">' in page.text
    fields = {
        unescape(name): unescape(value) for name, value in re.findall(r'name="([^"]+)" value="([^"]*)"', page.text)
    }
    fields.pop("deny")  # the Cancel button's field
    submitted = _http.post(provider.authorize_endpoint, data={**fields, "login": "carol"})
    assert submitted.status_code == 302
    assert set(_callback(submitted.headers["location"])) == {"code", "state"}


def test_refuses_an_unregistered_redirect_or_client_without_redirecting(provider: OAuthProvider) -> None:
    _, challenge = pkce_pair()
    elsewhere = "http://127.0.0.1:9/evil"
    refused = _http.get(provider.authorize_url(CLIENT, elsewhere, code_challenge=challenge, login="alice"))
    assert refused.status_code == 400 and "location" not in refused.headers
    unknown = _http.get(provider.authorize_url("nobody", CALLBACK, code_challenge=challenge, login="alice"))
    assert unknown.status_code == 400 and "location" not in unknown.headers

    provider.add_redirect(CLIENT, elsewhere)
    accepted = _http.get(provider.authorize_url(CLIENT, elsewhere, code_challenge=challenge, login="alice"))
    assert accepted.status_code == 302 and accepted.headers["location"].startswith(elsewhere + "?code=")

    no_pkce = _http.get(provider.authorize_url(CLIENT, CALLBACK, login="alice"))
    assert no_pkce.status_code == 302 and "error=invalid_request" in no_pkce.headers["location"]
