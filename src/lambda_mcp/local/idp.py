"""`lambda-mcp dev`'s development sign-in: a minimal OpenID provider that the authorization facade
(`LAMBDA_MCP_AUTH=proxy`) signs users in with when no upstream is configured. Development only.

It is served by the dev process itself, on its own port under `/_dev/idp` (config.DEV_SIGN_IN_PATH),
and the facade uses it over HTTP exactly as it uses any upstream (discovery, PKCE, a confidential
client, ID tokens checked against the JWKS, userinfo, refresh tokens): only the provider is a stand-in.

| route (under `/_dev/idp`) | what |
|---|---|
| `GET /.well-known/openid-configuration` | the provider's metadata |
| `GET /authorize` | the login page: one `username` field, any name signs in, no password |
| `POST /authorize` | the login: a code (60 s, single use) back to the facade's callback |
| `POST /token` | `authorization_code` (PKCE S256) and `refresh_token`, with the client secret |
| `GET /jwks`, `GET /userinfo` | the ID tokens' public key; the user's claims for an access token |

Kept out of Lambda three ways: only `lambda-mcp dev`'s two servers mount it (never the Lambda handlers
or `lambda-mcp serve`); it refuses to be built in a Lambda environment or for an issuer off loopback;
and `Settings` refuses an upstream issuer naming it in Lambda. ID tokens are signed with a key made for
the process; codes, refresh and access tokens are HMAC-signed with a key derived from the client
secret, which `lambda-mcp dev` passes to its children (`--reload`), so they survive a reload.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import os
import secrets
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from html import escape
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit

from ..config import DEV_SIGN_IN_PATH, LOOPBACK_NAMES, PREFIX

CLIENT_ID = "lambda-mcp-dev"
"""The facade's client at the development sign-in (its secret is made per `lambda-mcp dev` run)."""
CODE_SECONDS, LOGIN_SECONDS, ACCESS_SECONDS, REFRESH_SECONDS = 60, 600, 3600, 30 * 86_400
MAX_BODY = 16_384
SCOPES = ("openid", "profile", "email", "offline_access")
HEADERS = {
    "X-Frame-Options": "DENY",
    "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'",
    "Cache-Control": "no-store",
    "Referrer-Policy": "no-referrer",
}


class DevSignInError(RuntimeError):
    """The development sign-in was asked for where it must never run."""


@dataclass(frozen=True)
class Request:
    """One HTTP request to the sign-in: `path` below `/_dev/idp`, headers with lower-case names."""

    method: str
    path: str
    query: Mapping[str, str]
    headers: Mapping[str, str]
    body: bytes = b""


@dataclass(frozen=True)
class Reply:
    status: int
    headers: tuple[tuple[str, str], ...]
    body: bytes


def mounted(path: str) -> str | None:
    """The path below `/_dev/idp` of a request path, None for any other path."""
    if path == DEV_SIGN_IN_PATH or path.startswith(DEV_SIGN_IN_PATH + "/"):
        return path[len(DEV_SIGN_IN_PATH) :] or "/"
    return None


def settings_for(base: str) -> dict[str, str]:
    """The facade's upstream settings that name the development sign-in of the dev server at `base`
    (`http://127.0.0.1:8000`), with a client secret made for this run."""
    return {
        f"{PREFIX}AUTH_UPSTREAM_ISSUER": base + DEV_SIGN_IN_PATH,
        f"{PREFIX}AUTH_UPSTREAM_CLIENT_ID": CLIENT_ID,
        f"{PREFIX}AUTH_UPSTREAM_CLIENT_SECRET": secrets.token_urlsafe(32),
    }


def from_env(base: str, environ: Mapping[str, str] | None = None) -> DevIdentityProvider | None:
    """The development sign-in when the facade's settings name the one of the dev server at `base` (as
    `lambda-mcp dev` set them, `settings_for`), else None: its callback is the facade's."""
    from ..config import Settings, facade_issuer

    env = os.environ if environ is None else environ
    if env.get(f"{PREFIX}AUTH", "").lower() != "proxy":
        return None
    if env.get(f"{PREFIX}AUTH_UPSTREAM_ISSUER", "").rstrip("/") != base + DEV_SIGN_IN_PATH:
        return None
    settings = Settings.from_env(env)
    secret = settings.auth_upstream_client_secret
    if settings.auth_upstream_client_id != CLIENT_ID or not secret:
        return None
    return DevIdentityProvider(base + DEV_SIGN_IN_PATH, secret, facade_issuer(settings) + "/oauth/callback")


class DevIdentityProvider:
    def __init__(
        self, issuer: str, client_secret: str, callback: str, *, clock: Callable[[], float] = time.time
    ) -> None:
        """Refuses (`DevSignInError`) in a Lambda environment, and for an issuer or a callback off loopback."""
        if os.environ.get("AWS_LAMBDA_FUNCTION_NAME") or os.environ.get("AWS_LAMBDA_RUNTIME_API"):
            raise DevSignInError("lambda-mcp dev's development sign-in never runs in Lambda")
        for url in (issuer, callback):
            parts = urlsplit(url)
            if parts.scheme != "http" or (parts.hostname or "") not in LOOPBACK_NAMES:
                raise DevSignInError(f"the development sign-in serves loopback only, not {url}")
        from ..facade.signing import LocalSigner, generate_pem

        self.issuer = issuer
        self.callback = callback
        self._secret = client_secret
        self._hmac = hashlib.sha256(b"lambda-mcp dev sign-in\x00" + client_secret.encode()).digest()
        self._signer = LocalSigner(generate_pem())  # ID tokens: a throwaway key, made for this process
        self._clock = clock
        self._used: dict[str, float] = {}
        """Codes already exchanged (their id, until they expire)."""
        self._lock = threading.Lock()

    # -- HTTP ---------------------------------------------------------------------------------------
    def respond(self, request: Request) -> Reply:
        """The answer to one request (blocking: it signs)."""
        route = (request.method, request.path.rstrip("/") or "/")
        if route == ("GET", "/.well-known/openid-configuration"):
            return _json(self.metadata(), cache=True)
        if route == ("GET", "/jwks"):
            return _json({"keys": [self._signer.public_jwk()]}, cache=True)
        if route == ("GET", "/authorize"):
            return self.login_page(request.query)
        if route == ("POST", "/authorize"):
            return self.login(_form(request.body))
        if route == ("POST", "/token"):
            return self.token(request)
        if route in (("GET", "/userinfo"), ("POST", "/userinfo")):
            return self.userinfo(request.headers.get("authorization", ""))
        return _json({"error": "not_found"}, 404)

    def metadata(self) -> dict[str, Any]:
        base = self.issuer
        return {
            "issuer": base,
            "authorization_endpoint": base + "/authorize",
            "token_endpoint": base + "/token",
            "userinfo_endpoint": base + "/userinfo",
            "jwks_uri": base + "/jwks",
            "scopes_supported": list(SCOPES),
            "response_types_supported": ["code"],
            "grant_types_supported": ["authorization_code", "refresh_token"],
            "subject_types_supported": ["public"],
            "id_token_signing_alg_values_supported": ["ES256"],
            "token_endpoint_auth_methods_supported": ["client_secret_basic", "client_secret_post"],
            "code_challenge_methods_supported": ["S256"],
            "claims_supported": ["sub", "preferred_username", "name", "email", "email_verified"],
        }

    def login_page(self, query: Mapping[str, str]) -> Reply:
        problem = self._authorization_problem(query)
        if problem:
            return _page("Sign-in refused", f"<p>{escape(problem)}</p>", 400)
        login = {k: query.get(k, "") for k in ("state", "nonce", "code_challenge", "scope")}
        held = self._seal({**login, "use": "login", "exp": self._clock() + LOGIN_SECONDS})
        body = (
            '<p class="dev" id="development-only"><strong>Development only.</strong> This is the sign-in built into'
            " <code>lambda-mcp dev</code> for trying the authorization facade on this computer: any username"
            " signs in, with no password. It never runs in Lambda; a deployment signs users in with its"
            " identity provider (AuthMode=cognito or proxy).</p>"
            f'<form method="post" action="{escape(self.issuer)}/authorize">'
            f'<input type="hidden" name="request" value="{escape(held)}">'
            '<label>Username <input name="username" id="username" autocomplete="username" maxlength="64"'
            ' required autofocus></label><button type="submit" id="sign-in">Sign in</button></form>'
        )
        return _page("lambda-mcp dev: development sign-in", body)

    def login(self, form: dict[str, str]) -> Reply:
        login = self._open(form.get("request", ""), "login")
        username = " ".join(form.get("username", "").split())
        if login is None:
            return _page("Sign-in expired", "<p>Start the sign-in again from the application.</p>", 400)
        if not username or len(username) > 64 or not username.isprintable():
            return _page("No username", "<p>Go back and enter a username (up to 64 characters).</p>", 400)
        code = self._seal(
            {
                "use": "code",
                "sub": username,
                "nonce": login["nonce"],
                "challenge": login["code_challenge"],
                "scope": login["scope"],
                "jti": secrets.token_urlsafe(12),
                "exp": self._clock() + CODE_SECONDS,
            }
        )
        query = {"code": code, "state": login["state"], "iss": self.issuer}
        return Reply(302, (("Location", f"{self.callback}?{urlencode(query)}"), *HEADERS.items()), b"")

    def token(self, request: Request) -> Reply:
        form = _form(request.body)
        if not self._client_authenticated(request.headers.get("authorization", ""), form):
            return _json({"error": "invalid_client"}, 401, {"WWW-Authenticate": 'Basic realm="dev"'})
        grant = form.get("grant_type")
        if grant == "authorization_code":
            code = self._open(form.get("code", ""), "code")
            verifier = form.get("code_verifier", "")
            if code is None or form.get("redirect_uri") != self.callback:
                return _json({"error": "invalid_grant"}, 400)
            if not hmac.compare_digest(_s256(verifier), str(code["challenge"])):
                return _json({"error": "invalid_grant", "error_description": "PKCE verification failed"}, 400)
            if not self._first_use(code):
                return _json({"error": "invalid_grant", "error_description": "the code was used"}, 400)
            return _json(self._tokens(str(code["sub"]), str(code["scope"]), str(code["nonce"]) or None))
        if grant == "refresh_token":
            refresh = self._open(form.get("refresh_token", ""), "refresh")
            if refresh is None:
                return _json({"error": "invalid_grant"}, 400)
            return _json(self._tokens(str(refresh["sub"]), str(refresh["scope"]), None))
        return _json({"error": "unsupported_grant_type"}, 400)

    def userinfo(self, authorization: str) -> Reply:
        scheme, _, token = authorization.partition(" ")
        access = self._open(token.strip(), "access") if scheme.lower() == "bearer" else None
        if access is None:
            return _json({"error": "invalid_token"}, 401, {"WWW-Authenticate": 'Bearer error="invalid_token"'})
        return _json(claims(str(access["sub"])))

    # -- the parts ----------------------------------------------------------------------------------
    def _authorization_problem(self, query: Mapping[str, str]) -> str | None:
        if query.get("client_id") != CLIENT_ID:
            return f"unknown client {query.get('client_id')!r}: this sign-in knows only the facade ({CLIENT_ID})"
        if query.get("redirect_uri") != self.callback:
            return f"redirect_uri must be the facade's callback, {self.callback}"
        if query.get("response_type") != "code" or "openid" not in query.get("scope", "").split():
            return "expected response_type=code and the openid scope"
        if query.get("code_challenge_method") != "S256" or not query.get("code_challenge"):
            return "expected a PKCE S256 code_challenge"
        return None

    def _tokens(self, subject: str, scope: str, nonce: str | None) -> dict[str, Any]:
        from ..facade.signing import mint

        now = int(self._clock())
        identity = {"iss": self.issuer, "aud": CLIENT_ID, "iat": now, "exp": now + ACCESS_SECONDS, **claims(subject)}
        if nonce:
            identity["nonce"] = nonce
        refresh = {"use": "refresh", "sub": subject, "scope": scope, "jti": secrets.token_urlsafe(12)}
        return {
            "token_type": "Bearer",
            "expires_in": ACCESS_SECONDS,
            "scope": scope,
            "id_token": mint(self._signer, identity, "JWT"),
            "access_token": self._seal({"use": "access", "sub": subject, "exp": now + ACCESS_SECONDS}),
            "refresh_token": self._seal({**refresh, "exp": now + REFRESH_SECONDS}),
        }

    def _client_authenticated(self, authorization: str, form: Mapping[str, str]) -> bool:
        client_id, secret = form.get("client_id"), form.get("client_secret")
        scheme, _, encoded = authorization.partition(" ")
        if scheme.lower() == "basic":
            try:
                pair = base64.b64decode(encoded.strip(), validate=True).decode()
            except ValueError:
                return False
            from urllib.parse import unquote_plus

            raw_id, _, raw_secret = pair.partition(":")
            client_id, secret = unquote_plus(raw_id), unquote_plus(raw_secret)
        return client_id == CLIENT_ID and secret is not None and hmac.compare_digest(secret, self._secret)

    def _first_use(self, code: Mapping[str, Any]) -> bool:
        now = self._clock()
        with self._lock:
            for jti in [jti for jti, until in self._used.items() if until < now]:
                del self._used[jti]
            if code["jti"] in self._used:
                return False
            self._used[str(code["jti"])] = float(code["exp"])
            return True

    def _seal(self, payload: dict[str, Any]) -> str:
        body = _b64(json.dumps(payload, separators=(",", ":")).encode())
        return body + "." + _b64(hmac.new(self._hmac, body.encode(), hashlib.sha256).digest())

    def _open(self, token: str, use: str) -> dict[str, Any] | None:
        """The payload of a token this sign-in sealed for `use`, unexpired; None for anything else."""
        body, _, mac = token.partition(".")
        expected = _b64(hmac.new(self._hmac, body.encode(), hashlib.sha256).digest())
        if not body or not hmac.compare_digest(mac, expected):
            return None
        payload = json.loads(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)))
        if not isinstance(payload, dict) or payload.get("use") != use or payload.get("exp", 0) < self._clock():
            return None
        return payload


def claims(username: str) -> dict[str, Any]:
    """What the development sign-in says of a user: the name typed in is the subject."""
    email = username if "@" in username else f"{username}@example.com"
    return {"sub": username, "preferred_username": username, "name": username, "email": email, "email_verified": True}


def _s256(verifier: str) -> str:
    return _b64(hashlib.sha256(verifier.encode()).digest())


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _form(body: bytes) -> dict[str, str]:
    try:
        return dict(parse_qsl(body[:MAX_BODY].decode(), keep_blank_values=True))
    except UnicodeDecodeError:
        return {}


def _json(
    document: dict[str, Any], status: int = 200, extra: dict[str, str] | None = None, cache: bool = False
) -> Reply:
    headers = {"Content-Type": "application/json", "Cache-Control": "max-age=300" if cache else "no-store"}
    return Reply(status, tuple({**headers, **(extra or {})}.items()), json.dumps(document).encode())


def _page(title: str, body: str, status: int = 200) -> Reply:
    style = (
        "body{font-family:system-ui,sans-serif;max-width:34rem;margin:4rem auto;padding:0 1rem;color:#222}"
        ".dev{border-left:4px solid #c60;padding:.2rem .8rem;background:#fff6ec}label{display:block;margin:1rem 0}"
        "button{font-size:1rem;padding:.5rem 1.2rem}"
    )
    html = (
        f'<!doctype html><html lang="en"><head><meta charset="utf-8"><title>{escape(title)}</title>'
        f"<style>{style}</style></head><body><h1>{escape(title)}</h1>{body}</body></html>"
    )
    headers = {"Content-Type": "text/html; charset=utf-8", **HEADERS}
    return Reply(status, tuple(headers.items()), html.encode())
