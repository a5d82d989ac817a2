"""A test enterprise identity provider for Cross-App Access (Enterprise Managed Authorization, SEP-990):
it signs users in (`id_token`) and exchanges their ID tokens for ID-JAGs, the identity assertion JWT
authorization grants an MCP client then presents to the authorization facade (RFC 7523 jwt-bearer).

It serves on 127.0.0.1 from a thread of the test process: RFC 8414 metadata at both well-known forms
(`/.well-known/oauth-authorization-server` and `/.well-known/openid-configuration`, issuer
`http://127.0.0.1:<port>`), its JWKS (an ES256 key of its own, or RS256), and a token endpoint doing
RFC 8693 token exchange the way the official TypeScript client's `requestJwtAuthorizationGrant` sends it
(`requested_token_type=urn:ietf:params:oauth:token-type:id-jag`, `subject_token` an ID token this IdP
issued). It checks the client (its secret, by form or Basic) and the ID token it minted, then answers
with a signed ID-JAG (header `typ: oauth-id-jag+jwt`; `iss`, `sub`, `aud`, `client_id`, `resource`,
`scope`, `jti`, `iat`, `exp`). `mint_id_jag` makes ID-JAGs directly, for the refusal cases (another
resource, another audience, expired, not an ID-JAG, signed by a key it never published); a second
instance is an IdP the facade does not trust. Every request and every exchange is recorded.
"""

from __future__ import annotations

import base64
import binascii
import json
import secrets
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import parse_qsl, unquote

import jwt
from cryptography.hazmat.primitives.asymmetric import ec, rsa

from .loopback import LoopbackServer, respond

TOKEN_EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange"
ID_JAG = "urn:ietf:params:oauth:token-type:id-jag"
ID_TOKEN = "urn:ietf:params:oauth:token-type:id_token"
ID_JAG_TYP = "oauth-id-jag+jwt"
_MAX_BODY = 64 * 1024


@dataclass(frozen=True)
class IdpClient:
    """A client registered at the IdP: its secret (None: a public client) and its client ID at the MCP
    server's authorization server, which the IdP puts in the ID-JAG's `client_id`."""

    secret: str | None
    resource_client_id: str


class ExchangeRefused(Exception):
    def __init__(self, status: int, error: str, description: str) -> None:
        super().__init__(description)
        self.status, self.error, self.description = status, error, description


class EnterpriseIdP:
    """The IdP on a free loopback port until `stop()`. `client_id` is registered for token exchange with
    `client_secret` (by default one made here; `""`: a public client); its ID-JAGs name
    `resource_client_id` (by default the same ID) as the client at the MCP server's authorization server."""

    def __init__(
        self,
        *,
        client_id: str = "agent-1",
        client_secret: str | None = None,
        resource_client_id: str | None = None,
        algorithm: str = "ES256",
        lifetime: int = 300,
    ) -> None:
        if algorithm not in ("ES256", "RS256"):
            raise ValueError(f"unsupported algorithm {algorithm}")
        self.algorithm, self.lifetime = algorithm, lifetime
        self.kid = f"idp-{secrets.token_hex(4)}"
        self._key: Any = _private_key(algorithm)
        self._foreign_key: Any = _private_key(algorithm)  # never published: what it signs must be refused
        self.client_id = client_id
        self.client_secret = client_secret if client_secret is not None else secrets.token_urlsafe(18)
        self.clients: dict[str, IdpClient] = {
            client_id: IdpClient(self.client_secret or None, resource_client_id or client_id)
        }
        self.requests: list[str] = []
        """Every request: `METHOD /path`."""
        self.exchanges: list[dict[str, str]] = []
        """The form of every token-exchange request (secrets left out), answered or not."""
        self.issued: list[dict[str, Any]] = []
        """The claims of every ID-JAG the token endpoint issued."""
        self._lock = threading.Lock()
        self._server = LoopbackServer(self._serve, methods=("GET", "POST"))
        self.port = self._server.port
        self.issuer = self._server.url
        self.token_endpoint = f"{self.issuer}/oauth2/token"
        self.jwks_uri = f"{self.issuer}/oauth2/jwks"

    # -- what tests use ---------------------------------------------------------------------------
    def metadata(self) -> dict[str, Any]:
        """RFC 8414 (and OpenID discovery) metadata."""
        return {
            "issuer": self.issuer,
            "authorization_endpoint": f"{self.issuer}/oauth2/authorize",
            "token_endpoint": self.token_endpoint,
            "jwks_uri": self.jwks_uri,
            "response_types_supported": ["code"],
            "subject_types_supported": ["public"],
            "id_token_signing_alg_values_supported": [self.algorithm],
            "grant_types_supported": ["authorization_code", TOKEN_EXCHANGE],
            "token_endpoint_auth_methods_supported": ["client_secret_post", "client_secret_basic", "none"],
            "scopes_supported": ["openid", "email"],
        }

    def jwks(self) -> dict[str, Any]:
        public = self._key.public_key()
        if self.algorithm == "ES256":
            jwk = json.loads(jwt.algorithms.ECAlgorithm.to_jwk(public))
        else:
            jwk = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(public))
        return {"keys": [{**jwk, "kid": self.kid, "use": "sig", "alg": self.algorithm}]}

    def id_token(self, sub: str = "alice", *, audience: str | None = None, lifetime: int = 300, **claims: Any) -> str:
        """An OpenID Connect ID token this IdP issues to `audience` (its client; by default the one
        registered) for the user `sub`, as if the user had signed in there."""
        now = int(time.time())
        payload = {
            "iss": self.issuer,
            "sub": sub,
            "aud": audience or self.client_id,
            "iat": now,
            "exp": now + lifetime,
            "auth_time": now,
            "email": f"{sub}@example.com",
            **claims,
        }
        return self._sign(payload, {"typ": "JWT"})

    def mint_id_jag(
        self,
        *,
        audience: str,
        resource: str,
        client_id: str = "",
        sub: str | None = "alice",
        scope: str | None = None,
        lifetime: int | None = None,
        typ: str | None = ID_JAG_TYP,
        foreign_key: bool = False,
        **overrides: Any,
    ) -> str:
        """An ID-JAG signed by this IdP, without an exchange: for `audience` (the authorization server's
        issuer), `resource` (the MCP server's URL), `client_id` (by default the registered client's ID at
        that server), `sub` (None: none). `lifetime` below zero makes it expired; `typ` None leaves the header's `typ`
        out; `foreign_key` signs with a key the JWKS does not have (same `kid`). `overrides` replace or add
        claims; an override of None removes the claim."""
        now = int(time.time())
        claims: dict[str, Any] = {
            "iss": self.issuer,
            "sub": sub,
            "aud": audience,
            "client_id": client_id or self.clients[self.client_id].resource_client_id,
            "resource": resource,
            "jti": secrets.token_urlsafe(16),
            "iat": now,
            "exp": now + (self.lifetime if lifetime is None else lifetime),
            "auth_time": now,
        }
        if scope is not None:
            claims["scope"] = scope
        claims.update(overrides)
        claims = {name: value for name, value in claims.items() if value is not None}
        header = {"typ": typ} if typ else {}
        return self._sign(claims, header, foreign=foreign_key)

    def verify_id_jag(self, token: str) -> dict[str, Any]:
        """The claims of an ID-JAG this IdP signed (its signature and `typ` checked; not its audience)."""
        assert jwt.get_unverified_header(token).get("typ") == ID_JAG_TYP
        return dict(
            jwt.decode(
                token,
                self._key.public_key(),
                algorithms=[self.algorithm],
                issuer=self.issuer,
                options={"verify_aud": False},
            )
        )

    def stop(self) -> None:
        self._server.stop()

    # -- the wire -------------------------------------------------------------------------------------
    def _sign(self, claims: dict[str, Any], header: dict[str, Any], *, foreign: bool = False) -> str:
        key = self._foreign_key if foreign else self._key
        return jwt.encode(claims, key, algorithm=self.algorithm, headers={**header, "kid": self.kid})

    def _serve(self, handler: BaseHTTPRequestHandler) -> None:
        path = handler.path.split("?", 1)[0]
        with self._lock:
            self.requests.append(f"{handler.command} {path}")
        if handler.command == "GET" and path in (
            "/.well-known/oauth-authorization-server",
            "/.well-known/openid-configuration",
        ):
            _json(handler, 200, self.metadata())
        elif handler.command == "GET" and path == "/oauth2/jwks":
            _json(handler, 200, self.jwks())
        elif handler.command == "POST" and path == "/oauth2/token":
            self._token(handler)
        else:
            _json(handler, 404, {"error": "not_found"})

    def _token(self, handler: BaseHTTPRequestHandler) -> None:
        length = int(handler.headers.get("content-length") or 0)
        if length > _MAX_BODY:
            _json(handler, 413, {"error": "invalid_request", "error_description": "body too large"})
            return
        body = handler.rfile.read(length).decode("utf-8", "replace")
        form = dict(parse_qsl(body, keep_blank_values=True))
        with self._lock:
            self.exchanges.append({name: value for name, value in form.items() if name != "client_secret"})
        try:
            answer = self._exchange(form, handler.headers.get("authorization") or "")
        except ExchangeRefused as refused:
            headers = [("www-authenticate", 'Basic realm="idp"')] if refused.status == 401 else []
            error = {"error": refused.error, "error_description": refused.description}
            respond(handler, refused.status, json.dumps(error).encode(), headers=headers)
            return
        _json(handler, 200, answer)

    def _exchange(self, form: dict[str, str], authorization: str) -> dict[str, Any]:
        if form.get("grant_type") != TOKEN_EXCHANGE:
            raise ExchangeRefused(400, "unsupported_grant_type", "only token exchange is served here")
        client = self._client(form, authorization)
        if form.get("requested_token_type") != ID_JAG:
            raise ExchangeRefused(400, "invalid_request", "requested_token_type must be the ID-JAG type")
        if form.get("subject_token_type") != ID_TOKEN:
            raise ExchangeRefused(400, "invalid_request", "subject_token_type must be an ID token")
        audience, resource = form.get("audience", ""), form.get("resource", "")
        if not audience or not resource:
            raise ExchangeRefused(400, "invalid_request", "audience and resource are required")
        try:
            user = jwt.decode(
                form.get("subject_token", ""),
                self._key.public_key(),
                algorithms=[self.algorithm],
                audience=form["client_id"],
                issuer=self.issuer,
                options={"require": ["exp", "iat", "sub"]},
            )
        except (jwt.InvalidTokenError, KeyError) as exc:
            raise ExchangeRefused(400, "invalid_grant", f"the subject token is not a valid ID token: {exc}") from None
        scope = form.get("scope") or None
        jag = self.mint_id_jag(
            audience=audience, resource=resource, client_id=client.resource_client_id, sub=str(user["sub"]), scope=scope
        )
        with self._lock:
            self.issued.append(self.verify_id_jag(jag))
        answer: dict[str, Any] = {
            "access_token": jag,
            "issued_token_type": ID_JAG,
            "token_type": "N_A",
            "expires_in": self.lifetime,
        }
        if scope:
            answer["scope"] = scope
        return answer

    def _client(self, form: dict[str, str], authorization: str) -> IdpClient:
        """The authenticated client: by `client_secret_basic` or by `client_id` (and `client_secret`) in
        the form."""
        client_id, secret = form.get("client_id", ""), form.get("client_secret")
        if authorization.lower().startswith("basic "):
            try:
                decoded = base64.b64decode(authorization[6:].strip(), validate=True).decode()
                basic_id, _, basic_secret = decoded.partition(":")
            except (binascii.Error, UnicodeDecodeError):
                raise ExchangeRefused(401, "invalid_client", "unreadable Basic credentials") from None
            client_id, secret = unquote(basic_id), unquote(basic_secret)
            form["client_id"] = client_id
        client = self.clients.get(client_id)
        if client is None:
            raise ExchangeRefused(401, "invalid_client", "unknown client")
        if client.secret is not None and (secret is None or not secrets.compare_digest(secret, client.secret)):
            raise ExchangeRefused(401, "invalid_client", "the client did not authenticate")
        return client


def _private_key(algorithm: str) -> Any:
    if algorithm == "ES256":
        return ec.generate_private_key(ec.SECP256R1())
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


def _json(handler: BaseHTTPRequestHandler, status: int, document: dict[str, Any]) -> None:
    respond(handler, status, json.dumps(document).encode(), headers=[("cache-control", "no-store")])
