"""Keys and signed JWTs for the agent identity tests: a client's key pair (its assertions), a DPoP key
(its proofs), and an enterprise IdP's key (its ID-JAGs), all made with PyJWT and cryptography."""

from __future__ import annotations

import base64
import hashlib
import json
import secrets
import time
from dataclasses import dataclass, field
from typing import Any

import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

ASSERTION_TYPE = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer"


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


@dataclass
class KeyPair:
    """An EC P-256 key pair with its public JWK (`kid` set) and private PKCS8 PEM."""

    kid: str = field(default_factory=lambda: secrets.token_hex(4))
    key: Any = field(default_factory=lambda: ec.generate_private_key(ec.SECP256R1()))

    @property
    def public_jwk(self) -> dict[str, Any]:
        numbers = self.key.public_key().public_numbers()
        return {
            "kty": "EC",
            "crv": "P-256",
            "x": b64url(numbers.x.to_bytes(32, "big")),
            "y": b64url(numbers.y.to_bytes(32, "big")),
            "kid": self.kid,
            "use": "sig",
            "alg": "ES256",
        }

    @property
    def pem(self) -> str:
        return self.key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        ).decode()

    @property
    def thumbprint(self) -> str:
        jwk = self.public_jwk
        canonical = json.dumps({k: jwk[k] for k in ("crv", "kty", "x", "y")}, separators=(",", ":"), sort_keys=True)
        return b64url(hashlib.sha256(canonical.encode()).digest())

    def sign(self, claims: dict[str, Any], **header: Any) -> str:
        return jwt.encode(claims, self.key, algorithm="ES256", headers={"kid": self.kid, **header})


def client_assertion(keys: KeyPair, client_id: str, audience: str, **overrides: Any) -> str:
    now = int(time.time())
    claims = {"iss": client_id, "sub": client_id, "aud": audience, "iat": now, "exp": now + 120}
    claims["jti"] = secrets.token_urlsafe(12)
    return keys.sign({**claims, **overrides})


def dpop_proof(keys: KeyPair, method: str, url: str, access_token: str | None = None, **overrides: Any) -> str:
    claims: dict[str, Any] = {"jti": secrets.token_urlsafe(12), "htm": method, "htu": url, "iat": int(time.time())}
    if access_token is not None:
        claims["ath"] = b64url(hashlib.sha256(access_token.encode()).digest())
    header = {"typ": "dpop+jwt", "jwk": {k: v for k, v in keys.public_jwk.items() if k in ("kty", "crv", "x", "y")}}
    return jwt.encode({**claims, **overrides}, keys.key, algorithm="ES256", headers=header)


def id_jag(keys: KeyPair, issuer: str, audience: str, resource: str, client_id: str, **overrides: Any) -> str:
    now = int(time.time())
    claims = {
        "iss": issuer,
        "sub": "enterprise-user-7",
        "aud": audience,
        "resource": resource,
        "client_id": client_id,
        "jti": secrets.token_urlsafe(12),
        "iat": now,
        "exp": now + 300,
    }
    typ = overrides.pop("typ", "oauth-id-jag+jwt")
    return keys.sign({**claims, **overrides}, typ=typ)


def operator_entry(client_id: str, keys: KeyPair, scope: str, *grants: str) -> dict[str, Any]:
    return {
        "client_id": client_id,
        "client_name": f"{client_id} (test)",
        "token_endpoint_auth_method": "private_key_jwt",
        "jwks": {"keys": [keys.public_jwk]},
        "grant_types": list(grants) or ["client_credentials", JWT_BEARER],
        "scope": scope,
    }
