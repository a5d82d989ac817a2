"""A local token issuer for the auth tests: OpenID metadata and a JWKS served over HTTP on 127.0.0.1,
and tokens minted with its keys (or with keys it never published, for the negative cases).

It stands in for the authorization server where a test needs tokens a real one would never issue
(expired, not yet valid, for another audience, ...); the end-to-end OAuth flow uses the real
`oidc-provider` (tests/support/oidc). Counts JWKS fetches, so the kit's caching can be observed.
"""

from __future__ import annotations

import json
import time
from http.server import BaseHTTPRequestHandler
from typing import Any

import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa

from tests.support.loopback import LoopbackServer, respond


def _rsa() -> rsa.RSAPrivateKey:
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


def public_pem(key: rsa.RSAPrivateKey) -> bytes:
    return key.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)


class LocalIssuer:
    def __init__(self) -> None:
        self._server = LoopbackServer(self._serve)
        self.port = self._server.port
        self.url = f"http://127.0.0.1:{self.port}"
        self.rsa_key = _rsa()
        self.ec_key = ec.generate_private_key(ec.SECP256R1())
        self.foreign_key = _rsa()
        """Never published: tokens signed with it must be refused."""
        self.jwks_fetches = 0

    def _serve(self, handler: BaseHTTPRequestHandler) -> None:
        if handler.path == "/.well-known/openid-configuration":
            self._send(handler, self.metadata())
        elif handler.path == "/jwks":
            self.jwks_fetches += 1
            self._send(handler, self.jwks())
        else:
            handler.send_error(404)

    @staticmethod
    def _send(handler: BaseHTTPRequestHandler, document: dict[str, Any]) -> None:
        respond(handler, 200, json.dumps(document).encode())

    def metadata(self) -> dict[str, Any]:
        return {
            "issuer": self.url,
            "jwks_uri": f"{self.url}/jwks",
            "authorization_endpoint": f"{self.url}/authorize",
            "token_endpoint": f"{self.url}/token",
            "response_types_supported": ["code"],
            "subject_types_supported": ["public"],
            "id_token_signing_alg_values_supported": ["RS256"],
        }

    def jwks(self) -> dict[str, Any]:
        rsa_jwk = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(self.rsa_key.public_key()))
        ec_jwk = json.loads(jwt.algorithms.ECAlgorithm.to_jwk(self.ec_key.public_key()))
        return {
            "keys": [
                {**rsa_jwk, "kid": "rsa-1", "use": "sig", "alg": "RS256"},
                {**ec_jwk, "kid": "ec-1", "use": "sig", "alg": "ES256"},
            ]
        }

    def token(
        self,
        audience: str | list[str] | None,
        *,
        sub: str = "alice",
        scope: str | None = "mcp:tools",
        lifetime: float = 300,
        not_before: float | None = None,
        issuer: str | None = None,
        key: str = "rsa",
        kid: str | None = None,
        typ: str | None = None,
        **claims: Any,
    ) -> str:
        """A signed access token; `key` is `rsa` (kid rsa-1), `ec` (kid ec-1) or `foreign` (unpublished)."""
        now = time.time()
        payload: dict[str, Any] = {"iss": issuer or self.url, "sub": sub, "iat": int(now), "exp": int(now + lifetime)}
        if audience is not None:
            payload["aud"] = audience
        if scope is not None:
            payload["scope"] = scope
        if not_before is not None:
            payload["nbf"] = int(not_before)
        payload.update(claims)
        signer: Any = {"rsa": self.rsa_key, "ec": self.ec_key, "foreign": self.foreign_key}[key]
        algorithm = "ES256" if key == "ec" else "RS256"
        default_kid = {"rsa": "rsa-1", "ec": "ec-1", "foreign": "rsa-1"}[key]
        header = {"kid": kid or default_kid, **({"typ": typ} if typ else {})}
        return jwt.encode(payload, signer, algorithm=algorithm, headers=header)

    def stop(self) -> None:
        self._server.stop()
