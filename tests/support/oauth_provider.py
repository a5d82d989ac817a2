"""A stand-in third-party OAuth 2.0 provider (think GitHub or Google) for tests where a tool calls that
provider's API as the signed-in user: it runs the authorization-code flow with PKCE, issues opaque
access tokens and rotating refresh tokens, and serves a tiny per-user API behind them.

It serves on 127.0.0.1 from a thread of the test process (`start()`/`stop()`, or `with`), at
`http://127.0.0.1:<port>`:

- `GET /authorize` (`response_type=code`, `client_id`, `redirect_uri`, `state`, `code_challenge`,
  `code_challenge_method=S256`, `scope`, anything else): there is no real login page; the test plays the
  browser and names the user with a `login=<user>` parameter of its own (`authorize_as` does that). Without
  `login` the answer is a small HTML form (`POST /authorize`, the parameters as hidden fields, a `login`
  input) a test can submit. Success is a 302 to `redirect_uri?code=..&state=..`; `deny=1` redirects with
  `error=access_denied`. An unknown `client_id`, or a `redirect_uri` not registered for it, is a 400 with no
  redirect. Every authorize request's parameters are recorded.
- `POST /token` (form): `authorization_code` (single-use codes living `code_seconds`; `redirect_uri` and the
  PKCE verifier must match) and `refresh_token` (each refresh returns a new refresh token and retires the
  old one; a retired one is `invalid_grant`, and with `revoke_on_reuse` it also revokes the whole grant).
  The client authenticates by `client_secret_post` or `client_secret_basic`; which one is recorded.
- `GET /api/me` with `Authorization: Bearer <access token>`: `{"login": user, "data": "repos of <user>",
  "scope": ...}`, or 401 for an unknown, expired or revoked token.
- `POST /revoke` (RFC 7009, `token=<access or refresh token>`, client authenticated): revokes the grant the
  token belongs to, as Google does; `revoke(user)` does it for all the user's grants from Python.

State is guarded by one lock; the ThreadingHTTPServer answers each request on its own thread.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import html
import json
import math
import secrets
import threading
import time
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any
from urllib.parse import parse_qsl, unquote, urlencode, urlsplit, urlunsplit

import httpx

from .loopback import respond

_MAX_BODY = 64 * 1024


@dataclass
class _Code:
    client_id: str
    redirect_uri: str
    user: str
    scope: str
    challenge: str | None
    expires_at: float


@dataclass
class _Grant:
    """One user's consent to one client: the tokens issued under it share its fate."""

    id: str
    user: str
    client_id: str
    scope: str
    refresh_token: str
    access_tokens: set[str] = field(default_factory=set)
    revoked: bool = False


class _Refused(Exception):
    def __init__(self, status: int, error: str, description: str) -> None:
        super().__init__(description)
        self.status, self.error, self.description = status, error, description


def pkce_pair() -> tuple[str, str]:
    """A fresh PKCE `(code_verifier, code_challenge)` pair for S256."""
    verifier = secrets.token_urlsafe(48)
    return verifier, s256(verifier)


def s256(verifier: str) -> str:
    """The S256 code challenge of `verifier` (RFC 7636)."""
    return base64.urlsafe_b64encode(hashlib.sha256(verifier.encode("ascii")).digest()).rstrip(b"=").decode()


class OAuthProvider:
    """The provider, serving from `start()` until `stop()` (or as a context manager). `clients` maps a
    client ID to `(secret, [redirect_uri, ...])`; a secret of None makes a public client (PKCE only).
    `access_seconds` (also settable later; it applies to tokens issued afterwards) is the access-token
    lifetime; `revoke_on_reuse` makes a reused, rotated-out refresh token revoke its whole grant."""

    def __init__(
        self,
        clients: dict[str, tuple[str | None, Iterable[str]]] | None = None,
        *,
        access_seconds: float = 3600,
        code_seconds: float = 60,
        revoke_on_reuse: bool = False,
        require_pkce: bool = True,
        default_scope: str = "read:user",
    ) -> None:
        self.access_seconds = access_seconds
        self.code_seconds = code_seconds
        self.revoke_on_reuse = revoke_on_reuse
        self.require_pkce = require_pkce
        self.default_scope = default_scope
        self._lock = threading.RLock()
        self._clients: dict[str, tuple[str | None, list[str]]] = {}
        for client_id, (secret, uris) in (clients or {}).items():
            self.add_client(client_id, secret, uris)
        self._codes: dict[str, _Code] = {}
        self._grants: dict[str, _Grant] = {}
        self._access: dict[str, tuple[str, float]] = {}  # access token -> (grant id, expires at)
        self._refresh: dict[str, str] = {}  # current refresh token -> grant id
        self._retired: dict[str, str] = {}  # rotated-out refresh token -> grant id
        self.user_data: dict[str, str] = {}
        """What `/api/me` answers as `data` for a user; by default `repos of <user>`."""
        self.requests: list[str] = []
        """Every request: `METHOD /path`."""
        self.authorize_requests: list[dict[str, str]] = []
        """The parameters of every authorize request (GET query or POSTed form), answered or refused."""
        self.token_requests: list[dict[str, str]] = []
        """The form of every token request, `client_secret` left out, with `auth_method` added:
        `client_secret_basic`, `client_secret_post`, `none` or `` (it did not get that far)."""
        self.api_calls: list[dict[str, Any]] = []
        """Every API call: `{"path", "user" (None: refused), "status"}`."""
        self.code_exchanges: Counter[str] = Counter()
        """Successful code exchanges, per user."""
        self.refreshes: Counter[str] = Counter()
        """Successful refreshes, per user."""
        self.reuses: Counter[str] = Counter()
        """Refused presentations of rotated-out refresh tokens, per user."""
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle --------------------------------------------------------------------------------------
    def start(self) -> OAuthProvider:
        """Serve on a free loopback port (once; again is a no-op); returns self."""
        with self._lock:
            if self._server is None:
                serve = self._serve

                class Handler(BaseHTTPRequestHandler):
                    def do_GET(self) -> None:
                        serve(self)

                    do_POST = do_GET

                    def log_message(self, format: str, *args: Any) -> None:
                        return

                self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
                self._server.daemon_threads = True
                # A short poll: `stop()` (shutdown) waits for the loop to look, 0.5 s by default.
                self._thread = threading.Thread(
                    target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
                )
                self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving (a no-op when not serving)."""
        with self._lock:
            server, self._server = self._server, None
            thread, self._thread = self._thread, None
        if server is not None:
            server.shutdown()
            server.server_close()
        if thread is not None:
            thread.join(timeout=5)

    def __enter__(self) -> OAuthProvider:
        return self.start()

    def __exit__(
        self, kind: type[BaseException] | None, value: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self.stop()

    @property
    def url(self) -> str:
        """`http://127.0.0.1:<port>` (only once started)."""
        return f"http://127.0.0.1:{self.port}"

    @property
    def port(self) -> int:
        if self._server is None:
            raise RuntimeError("the OAuth provider is not started")
        return int(self._server.server_address[1])

    @property
    def authorize_endpoint(self) -> str:
        return f"{self.url}/authorize"

    @property
    def token_endpoint(self) -> str:
        return f"{self.url}/token"

    @property
    def revoke_endpoint(self) -> str:
        return f"{self.url}/revoke"

    @property
    def api_url(self) -> str:
        """The user API: `GET` it with the bearer token."""
        return f"{self.url}/api/me"

    def metadata(self) -> dict[str, Any]:
        """RFC 8414 metadata (also served at `/.well-known/oauth-authorization-server`)."""
        return {
            "issuer": self.url,
            "authorization_endpoint": self.authorize_endpoint,
            "token_endpoint": self.token_endpoint,
            "revocation_endpoint": self.revoke_endpoint,
            "response_types_supported": ["code"],
            "grant_types_supported": ["authorization_code", "refresh_token"],
            "code_challenge_methods_supported": ["S256"],
            "token_endpoint_auth_methods_supported": ["client_secret_post", "client_secret_basic", "none"],
        }

    # -- what tests use ---------------------------------------------------------------------------------
    def add_client(self, client_id: str, secret: str | None, redirect_uris: Iterable[str] = ()) -> None:
        """Register (or replace) a client."""
        with self._lock:
            self._clients[client_id] = (secret, list(redirect_uris))

    def add_redirect(self, client_id: str, uri: str) -> None:
        """Register one more redirect URI for a registered client (exact match at authorize)."""
        with self._lock:
            secret, uris = self._clients[client_id]
            if uri not in uris:
                uris.append(uri)

    def authorize_url(
        self,
        client_id: str,
        redirect_uri: str,
        *,
        state: str = "state-1",
        code_challenge: str | None = None,
        scope: str | None = None,
        **extra: str,
    ) -> str:
        """An authorize URL as a client would build it (S256 when `code_challenge` is given)."""
        params = {"response_type": "code", "client_id": client_id, "redirect_uri": redirect_uri, "state": state}
        if code_challenge is not None:
            params |= {"code_challenge": code_challenge, "code_challenge_method": "S256"}
        if scope is not None:
            params["scope"] = scope
        return f"{self.authorize_endpoint}?{urlencode(params | extra)}"

    def authorize_as(self, url: str, user: str, *, deny: bool = False) -> str:
        """Follow the authorize URL `url` as `user`'s browser would (adding `login=<user>`, and `deny=1`
        with `deny`), without following the final redirect: the `Location` it redirects to (the client's
        callback with `code` and `state`, or with `error`). A refusal without redirect raises."""
        extra = {"login": user} | ({"deny": "1"} if deny else {})
        separator = "&" if urlsplit(url).query else "?"
        with httpx.Client(trust_env=False, timeout=10) as browser:  # no proxy between it and 127.0.0.1
            response = browser.get(f"{url}{separator}{urlencode(extra)}", follow_redirects=False)
        if response.status_code != 302:
            raise AssertionError(f"authorize answered {response.status_code}, not a redirect: {response.text}")
        return response.headers["location"]

    def issue(self, user: str, client_id: str, scope: str | None = None) -> dict[str, Any]:
        """Tokens for `user` at `client_id` without the flow (a token response, as `/token` answers)."""
        with self._lock:
            return self._new_grant(user, client_id, scope or self.default_scope)

    def expire_all(self) -> None:
        """Make every access token issued so far expired now (refresh tokens stay valid)."""
        with self._lock:
            now = time.time()
            self._access = {token: (grant, now - 1) for token, (grant, _) in self._access.items()}

    def revoke(self, user: str) -> int:
        """Revoke every grant of `user`: their access tokens 401 and their refresh tokens are
        `invalid_grant` from now on. Returns how many grants there were."""
        with self._lock:
            grants = [grant for grant in self._grants.values() if grant.user == user and not grant.revoked]
            for grant in grants:
                self._revoke_grant(grant)
            return len(grants)

    def access_tokens(self, user: str) -> list[str]:
        """`user`'s access tokens that would be accepted now."""
        with self._lock:
            now = time.time()
            return [
                token
                for token, (grant_id, expires_at) in self._access.items()
                if self._grants[grant_id].user == user and now < expires_at
            ]

    # -- the wire -----------------------------------------------------------------------------------------
    def _serve(self, handler: BaseHTTPRequestHandler) -> None:
        split = urlsplit(handler.path)
        path = split.path
        with self._lock:
            self.requests.append(f"{handler.command} {path}")
        try:
            if path == "/authorize" and handler.command == "GET":
                self._authorize(handler, dict(parse_qsl(split.query, keep_blank_values=True)))
            elif path == "/authorize" and handler.command == "POST":
                self._authorize(handler, _form(handler))
            elif path == "/token" and handler.command == "POST":
                self._token(handler)
            elif path == "/revoke" and handler.command == "POST":
                self._revoke_endpoint(handler)
            elif path == "/api/me" and handler.command == "GET":
                self._api_me(handler)
            elif path == "/.well-known/oauth-authorization-server" and handler.command == "GET":
                _json(handler, 200, self.metadata())
            else:
                _json(handler, 404, {"error": "not_found"})
        except _Refused as refused:
            headers = [("www-authenticate", 'Basic realm="provider"')] if refused.status == 401 else []
            error = {"error": refused.error, "error_description": refused.description}
            _json(handler, refused.status, error, headers)

    def _authorize(self, handler: BaseHTTPRequestHandler, params: dict[str, str]) -> None:
        with self._lock:
            self.authorize_requests.append(dict(params))
            client = self._clients.get(params.get("client_id", ""))
        redirect_uri = params.get("redirect_uri", "")
        if client is None:
            _page(handler, 400, "<p>Unknown client.</p>")
            return
        if redirect_uri not in client[1]:
            _page(handler, 400, "<p>The redirect_uri is not registered for this client.</p>")
            return
        state = params.get("state")

        def back(answer: dict[str, str]) -> None:
            if state is not None:
                answer["state"] = state
            respond(handler, 302, b"", None, headers=[("location", _with_query(redirect_uri, answer))])

        if params.get("response_type") != "code":
            back({"error": "unsupported_response_type"})
            return
        challenge = params.get("code_challenge") or None
        if challenge is not None and params.get("code_challenge_method") != "S256":
            back({"error": "invalid_request", "error_description": "code_challenge_method must be S256"})
            return
        if challenge is None and self.require_pkce:
            back({"error": "invalid_request", "error_description": "PKCE (S256) is required"})
            return
        if params.get("deny") == "1":
            back({"error": "access_denied", "error_description": "the user denied the request"})
            return
        user = params.get("login", "")
        if not user:
            _page(handler, 200, _login_form(params))
            return
        code = secrets.token_urlsafe(24)
        with self._lock:
            self._codes[code] = _Code(
                client_id=params["client_id"],
                redirect_uri=redirect_uri,
                user=user,
                scope=params.get("scope") or self.default_scope,
                challenge=challenge,
                expires_at=time.time() + self.code_seconds,
            )
        back({"code": code})

    def _token(self, handler: BaseHTTPRequestHandler) -> None:
        form = _form(handler)
        record = {name: value for name, value in form.items() if name != "client_secret"} | {"auth_method": ""}
        with self._lock:
            self.token_requests.append(record)
        client_id, method = self._client(form, handler.headers.get("authorization") or "")
        record["auth_method"] = method
        grant_type = form.get("grant_type")
        with self._lock:
            if grant_type == "authorization_code":
                answer = self._exchange_code(form, client_id)
            elif grant_type == "refresh_token":
                answer = self._exchange_refresh(form, client_id)
            else:
                raise _Refused(400, "unsupported_grant_type", f"grant_type {grant_type!r} is not served here")
        _json(handler, 200, answer)

    def _exchange_code(self, form: dict[str, str], client_id: str) -> dict[str, Any]:
        code = self._codes.pop(form.get("code", ""), None)  # single use: gone on the first attempt
        if code is None or time.time() >= code.expires_at:
            raise _Refused(400, "invalid_grant", "unknown, used or expired authorization code")
        if code.client_id != client_id:
            raise _Refused(400, "invalid_grant", "the code was issued to another client")
        if form.get("redirect_uri") != code.redirect_uri:
            raise _Refused(400, "invalid_grant", "redirect_uri does not match the authorization request")
        verifier = form.get("code_verifier")
        if code.challenge is None:
            if verifier:
                raise _Refused(400, "invalid_grant", "code_verifier without a code_challenge")
        elif not verifier or not secrets.compare_digest(s256(verifier), code.challenge):
            raise _Refused(400, "invalid_grant", "PKCE verification failed")
        self.code_exchanges[code.user] += 1
        return self._new_grant(code.user, client_id, code.scope)

    def _exchange_refresh(self, form: dict[str, str], client_id: str) -> dict[str, Any]:
        presented = form.get("refresh_token", "")
        grant_id = self._refresh.get(presented)
        if grant_id is None:
            retired = self._retired.get(presented)
            if retired is not None:
                grant = self._grants[retired]
                self.reuses[grant.user] += 1
                if self.revoke_on_reuse:
                    self._revoke_grant(grant)
                raise _Refused(400, "invalid_grant", "the refresh token was already used")
            raise _Refused(400, "invalid_grant", "unknown or revoked refresh token")
        grant = self._grants[grant_id]
        if grant.client_id != client_id:
            raise _Refused(400, "invalid_grant", "the refresh token was issued to another client")
        scope = form.get("scope") or grant.scope
        if not set(scope.split()) <= set(grant.scope.split()):
            raise _Refused(400, "invalid_scope", "a refresh cannot widen the scope")
        del self._refresh[presented]
        self._retired[presented] = grant.id
        grant.refresh_token = secrets.token_urlsafe(32)
        self._refresh[grant.refresh_token] = grant.id
        self.refreshes[grant.user] += 1
        return self._token_answer(grant, scope)

    def _new_grant(self, user: str, client_id: str, scope: str) -> dict[str, Any]:
        grant = _Grant(secrets.token_hex(8), user, client_id, scope, secrets.token_urlsafe(32))
        self._grants[grant.id] = grant
        self._refresh[grant.refresh_token] = grant.id
        return self._token_answer(grant, scope)

    def _token_answer(self, grant: _Grant, scope: str) -> dict[str, Any]:
        access = secrets.token_urlsafe(32)
        grant.access_tokens.add(access)
        self._access[access] = (grant.id, time.time() + self.access_seconds)
        return {
            "access_token": access,
            "token_type": "bearer",
            "expires_in": math.ceil(self.access_seconds),
            "refresh_token": grant.refresh_token,
            "scope": scope,
        }

    def _revoke_grant(self, grant: _Grant) -> None:
        grant.revoked = True
        for token in grant.access_tokens:
            self._access.pop(token, None)
        grant.access_tokens.clear()
        if self._refresh.pop(grant.refresh_token, None) is not None:
            self._retired[grant.refresh_token] = grant.id

    def _revoke_endpoint(self, handler: BaseHTTPRequestHandler) -> None:
        form = _form(handler)
        client_id, _ = self._client(form, handler.headers.get("authorization") or "")
        token = form.get("token", "")
        with self._lock:
            grant_id = self._refresh.get(token) or self._access.get(token, ("", 0.0))[0]
            grant = self._grants.get(grant_id)
            if grant is not None and grant.client_id == client_id:
                self._revoke_grant(grant)
        respond(handler, 200, b"", None)  # RFC 7009: 200 whether or not the token was known

    def _api_me(self, handler: BaseHTTPRequestHandler) -> None:
        authorization = handler.headers.get("authorization") or ""
        scheme, _, token = authorization.partition(" ")
        with self._lock:
            found = self._access.get(token.strip()) if scheme.lower() == "bearer" else None
            grant = self._grants[found[0]] if found is not None and time.time() < found[1] else None
            self.api_calls.append(
                {"path": "/api/me", "user": grant.user if grant else None, "status": 200 if grant else 401}
            )
            data = self.user_data.get(grant.user, f"repos of {grant.user}") if grant else ""
        if grant is None:
            challenge = 'Bearer error="invalid_token"' if token else "Bearer"
            body = json.dumps({"message": "Bad credentials"}).encode()
            respond(handler, 401, body, headers=[("www-authenticate", challenge)])
            return
        _json(handler, 200, {"login": grant.user, "data": data, "scope": grant.scope})

    def _client(self, form: dict[str, str], authorization: str) -> tuple[str, str]:
        """The authenticated client's ID and how it authenticated: `client_secret_basic`,
        `client_secret_post`, or `none` (a public client naming itself)."""
        secret: str | None
        if authorization.lower().startswith("basic "):
            if "client_secret" in form:
                raise _Refused(400, "invalid_request", "more than one client authentication method")
            try:
                decoded = base64.b64decode(authorization[6:].strip(), validate=True).decode()
            except (binascii.Error, UnicodeDecodeError):
                raise _Refused(401, "invalid_client", "unreadable Basic credentials") from None
            basic_id, _, basic_secret = decoded.partition(":")
            client_id, secret, method = unquote(basic_id), unquote(basic_secret), "client_secret_basic"
            if form.get("client_id", client_id) != client_id:
                raise _Refused(400, "invalid_request", "client_id differs from the Basic credentials")
        else:
            client_id, secret = form.get("client_id", ""), form.get("client_secret")
            method = "none" if secret is None else "client_secret_post"
        with self._lock:
            client = self._clients.get(client_id)
        if client is None:
            raise _Refused(401, "invalid_client", "unknown client")
        expected = client[0]
        if expected is None:
            if secret:
                raise _Refused(401, "invalid_client", "a public client has no secret")
            return client_id, "none"
        if not secret or not secrets.compare_digest(secret, expected):
            raise _Refused(401, "invalid_client", "the client did not authenticate")
        return client_id, method


def _form(handler: BaseHTTPRequestHandler) -> dict[str, str]:
    length = int(handler.headers.get("content-length") or 0)
    if length > _MAX_BODY:
        raise _Refused(413, "invalid_request", "body too large")
    body = handler.rfile.read(length).decode("utf-8", "replace")
    return dict(parse_qsl(body, keep_blank_values=True))


def _with_query(uri: str, params: dict[str, str]) -> str:
    parts = urlsplit(uri)
    query = "&".join(part for part in (parts.query, urlencode(params)) if part)
    return urlunsplit(parts._replace(query=query))


def _login_form(params: dict[str, str]) -> str:
    hidden = "".join(
        f'<input type="hidden" name="{html.escape(name)}" value="{html.escape(value)}">'
        for name, value in params.items()
        if name not in ("login", "deny")
    )
    return (
        '<form method="post" action="/authorize">'
        f'{hidden}<input name="login" autofocus><button type="submit">Authorize</button>'
        '<button type="submit" name="deny" value="1">Cancel</button></form>'
    )


def _page(handler: BaseHTTPRequestHandler, status: int, body: str) -> None:
    document = f"<!doctype html><title>Stand-in provider</title>{body}"
    respond(handler, status, document.encode(), "text/html; charset=utf-8", [("cache-control", "no-store")])


def _json(
    handler: BaseHTTPRequestHandler, status: int, document: dict[str, Any], headers: list[tuple[str, str]] | None = None
) -> None:
    respond(handler, status, json.dumps(document).encode(), headers=[("cache-control", "no-store"), *(headers or [])])
