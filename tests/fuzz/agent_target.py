"""The machine identities of the facade fuzzer's target: operator clients (`LAMBDA_MCP_AUTH_CLIENTS`, inline
JSON), the trusted enterprise IdPs (`LAMBDA_MCP_AUTH_TRUSTED_ISSUERS`, their keys served by stand-in
fetches: one IdP's keys are always there, the other's never are), the DPoP keys, and `sign`, which makes
a probe's `Signed` JWTs: valid for the request, then changed as the probe says. Nothing here reaches the
network but the loopback document server (the `jwks_uri` clients' keys).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import secrets
import time
from typing import Any

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ed25519, rsa
from jwt.algorithms import get_default_algorithms

from lambda_mcp.auth.fetch import Deadline, FetchError
from lambda_mcp.auth.issuer import Issuer
from lambda_mcp.auth.tokens import TokenValidator
from lambda_mcp.facade.enterprise import ID_JAG_TYPE
from lambda_mcp.facade.hashing import digest
from tests.support.agent_keys import KeyPair, operator_entry

from .agent_probes import BASE, DOWN_IDP, DROP, IDP, JWT_BEARER, OPERATORS, RESOURCE, TOKEN_URL, Now, Signed
from .facade_probes import PATH, PORT, SCOPES, Document, encode_json, write_json
from .probes import mangle

ALGORITHMS = get_default_algorithms()


def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _int_bytes(number: int) -> bytes:
    return number.to_bytes(max(1, (number.bit_length() + 7) // 8), "big")


class Signer:
    """A private key with its public JWK (no `kid`), its PEM and the algorithm it signs with by default."""

    def __init__(self, key: Any, algorithm: str, kid: str) -> None:
        self.key = key
        self.algorithm = algorithm
        self.kid = kid

    @classmethod
    def ec(cls, pair: KeyPair) -> Signer:
        return cls(pair.key, "ES256", pair.kid)

    @property
    def public_jwk(self) -> dict[str, Any]:
        public = self.key.public_key()
        if isinstance(public, rsa.RSAPublicKey):
            numbers = public.public_numbers()
            return {"kty": "RSA", "n": b64(_int_bytes(numbers.n)), "e": b64(_int_bytes(numbers.e))}
        if isinstance(public, ed25519.Ed25519PublicKey):
            raw = public.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
            return {"kty": "OKP", "crv": "Ed25519", "x": b64(raw)}
        ec_numbers = public.public_numbers()
        x, y = (b64(value.to_bytes(32, "big")) for value in (ec_numbers.x, ec_numbers.y))
        return {"kty": "EC", "crv": "P-256", "x": x, "y": y}

    @property
    def private_jwk(self) -> dict[str, Any]:
        jwk = self.public_jwk
        if isinstance(self.key, rsa.RSAPrivateKey):
            return {**jwk, "d": b64(_int_bytes(self.key.private_numbers().d))}
        if isinstance(self.key, ed25519.Ed25519PrivateKey):
            raw = self.key.private_bytes(
                serialization.Encoding.Raw, serialization.PrivateFormat.Raw, serialization.NoEncryption()
            )
            return {**jwk, "d": b64(raw)}
        return {**jwk, "d": b64(self.key.private_numbers().private_value.to_bytes(32, "big"))}

    @property
    def public_pem(self) -> bytes:
        return bytes(
            self.key.public_key().public_bytes(
                serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
            )
        )

    def sign(self, message: bytes, algorithm: str | None = None) -> bytes:
        return bytes(ALGORITHMS[algorithm or self.algorithm].sign(message, self.key))


class Agents:
    """Every key and machine identity the target's facade is configured with, and the JWTs they sign."""

    def __init__(self, publish: Any, document_port: int) -> None:
        pairs = {name: KeyPair() for name in ("agent", "narrow", "keyed", "down")}
        self.clients = {name: Signer.ec(pair) for name, pair in pairs.items()}
        self.clients["rsa"] = Signer(rsa.generate_private_key(public_exponent=65537, key_size=2048), "RS256", "rsa-1")
        self.idp = Signer.ec(KeyPair(kid="idp-1"))
        self.dpop = Signer.ec(KeyPair())
        """The key the target's bound tokens are bound to (and that signs the probes' right proofs)."""
        self.dpop_rsa = Signer(self.clients["rsa"].key, "PS256", "")
        self.dpop_ed = Signer(ed25519.Ed25519PrivateKey.generate(), "EdDSA", "")
        self.other = Signer.ec(KeyPair())
        self.secret = secrets.token_urlsafe(32)
        """The client_secret_basic client's secret (`ci-job`)."""
        keyed = {"keys": [{**self.clients["keyed"].public_jwk, "kid": self.clients["keyed"].kid, "use": "sig"}]}
        headers = (("Content-Type", "application/json"), ("Cache-Control", "max-age=600"))
        self.jwks_url = publish(Document(200, headers, json.dumps(keyed).encode()), f"http://127.0.0.1:{PORT}{PATH}")
        self.down_url = f"http://127.0.0.1:{document_port}/missing/jwks.json"
        self.key_fetches = {IDP: 0, DOWN_IDP: 0}

    @property
    def static_secrets(self) -> list[str]:
        """What no answer may ever show: the operator client's secret and its stored hash."""
        return [self.secret, digest(self.secret)]

    def env(self) -> dict[str, str]:
        rsa_jwk = {**self.clients["rsa"].public_jwk, "kid": "rsa-1", "use": "sig"}
        clients = [
            operator_entry("agent-1", _pair(self.clients["agent"]), "mcp:tools inventory:read inventory:write"),
            operator_entry("agent-2", _pair(self.clients["narrow"]), "mcp:tools", "client_credentials"),
            {
                "client_id": "agent-uri",
                "token_endpoint_auth_method": "private_key_jwt",
                "jwks_uri": self.jwks_url,
                "grant_types": ["client_credentials", JWT_BEARER],
                "scope": "mcp:tools inventory:write",
            },
            {
                "client_id": "agent-rsa",
                "client_name": "RSA agent",
                "token_endpoint_auth_method": "private_key_jwt",
                "jwks": {"keys": [rsa_jwk]},
                "grant_types": ["client_credentials"],
                "scope": "mcp:tools",
            },
            {
                "client_id": "agent-down",
                "token_endpoint_auth_method": "private_key_jwt",
                "jwks_uri": self.down_url,
                "grant_types": ["client_credentials", JWT_BEARER],
                "scope": "mcp:tools",
            },
            {
                "client_id": "ci-job",
                "token_endpoint_auth_method": "client_secret_basic",
                "client_secret_hash": digest(self.secret),
                "grant_types": ["client_credentials"],
                "scope": "mcp:tools",
            },
        ]
        return {
            "LAMBDA_MCP_AUTH_CLIENTS": json.dumps(clients),
            "LAMBDA_MCP_AUTH_TRUSTED_ISSUERS": f"{IDP},{DOWN_IDP}",
            "LAMBDA_MCP_AUTH_UPSTREAM_CLAIMS": "email,groups",
            "LAMBDA_MCP_AUTH_DPOP": "optional",
        }

    def install(self, facade: Any) -> None:
        """The trusted IdPs' keys through stand-in fetches: `IDP`'s always, `DOWN_IDP`'s never."""
        published = {"keys": [{**self.idp.public_jwk, "kid": self.idp.kid, "use": "sig", "alg": "ES256"}]}

        def keys(url: str, deadline: Deadline) -> dict[str, Any]:
            self.key_fetches[IDP] += 1
            return published

        def down(url: str, deadline: Deadline) -> dict[str, Any]:
            self.key_fetches[DOWN_IDP] += 1
            raise FetchError(f"{url}: the stand-in identity provider is down")

        enterprise = facade.grants.machine.enterprise
        for issuer, fetch in ((IDP, keys), (DOWN_IDP, down)):
            enterprise._validators[issuer] = TokenValidator(
                Issuer(issuer, jwks_url=issuer + "/jwks", fetch=fetch), token_type=ID_JAG_TYPE
            )

    # -- signing --------------------------------------------------------------------------------------
    def sign(
        self, spec: Signed, *, method: str, url: str, access_token: str | None = None, nonce: str | None = None
    ) -> str:
        """The compact JWT `spec` describes, for a request of `method` to `url`."""
        now = time.time()
        claims: dict[str, Any]
        header: dict[str, Any]
        if spec.kind == "assertion":
            client_id = OPERATORS.get(spec.client, "agent-1")
            right = self.clients.get(spec.client, self.clients["agent"])
            claims = {"iss": client_id, "sub": client_id, "aud": BASE if spec.pick % 3 else TOKEN_URL}
            claims |= {"iat": int(now), "exp": int(now) + 120, "jti": secrets.token_urlsafe(12)}
            header = {"alg": right.algorithm, "typ": "JWT", "kid": right.kid}
            if spec.client == "rsa" and spec.pick % 2:
                header["alg"] = "PS256"
        elif spec.kind == "id-jag":
            right = self.idp
            claims = {"iss": IDP, "sub": "enterprise-user-7", "aud": BASE, "resource": RESOURCE}
            claims |= {"client_id": OPERATORS.get(spec.client, "agent-1"), "jti": secrets.token_urlsafe(12)}
            claims |= {"iat": int(now), "exp": int(now) + 300}
            if spec.pick % 4 == 0:  # the scopes /mcp requires, and claims the facade copies
                claims |= {"scope": " ".join(SCOPES), "email": "user7@enterprise.example", "groups": ["mcp-users"]}
            elif spec.pick % 4 == 1:
                claims["scope"] = "mcp:tools"
            header = {"alg": "ES256", "typ": ID_JAG_TYPE, "kid": right.kid}
        else:
            right = {"rsa": self.dpop_rsa, "ed": self.dpop_ed, "other": self.other}.get(spec.key, self.dpop)
            claims = {"jti": secrets.token_urlsafe(12), "htm": method, "htu": spec.url or url, "iat": int(now)}
            if access_token is not None:
                claims["ath"] = b64(hashlib.sha256(access_token.encode()).digest())
            if nonce is not None:
                claims["nonce"] = nonce
            header = {"alg": right.algorithm, "typ": "dpop+jwt", "jwk": self._jwk(right, spec.jwk)}
        signer = self._signer(spec, right)
        if spec.key in ("none", "hs256"):
            header["alg"] = "none" if spec.key == "none" else "HS256"
        signing_alg = header["alg"]
        for name, value in spec.header:
            header[name] = value
        for name, value in spec.claims:
            claims[name] = value
        header = {k: _resolved(v, now) for k, v in header.items() if v != DROP}
        claims = {k: _resolved(v, now) for k, v in claims.items() if v != DROP}
        message = f"{b64(encode_json(write_json(header)))}.{b64(encode_json(write_json(claims)))}"
        if spec.key in ("none", "unsigned"):
            signature = ""
        elif spec.key == "garbage":
            signature = "A" * 86
        elif spec.key == "hs256":
            signature = b64(hmac.new(right.public_pem, message.encode(), hashlib.sha256).digest())
        else:
            natural = signing_alg if signing_alg in ("RS256", "PS256") and signer is right else signer.algorithm
            signature = b64(signer.sign(message.encode(), natural))
        return _damaged(f"{message}.{signature}", spec.damage, spec.pick)

    def _signer(self, spec: Signed, right: Signer) -> Signer:
        if spec.key == "other":
            return self.other
        if spec.key == "client":
            return self.clients["narrow" if spec.kind == "assertion" else "agent"]
        if spec.key == "idp":
            return self.idp
        return right

    def _jwk(self, signer: Signer, how: str) -> Any:
        public = signer.public_jwk
        if how == "private":
            return signer.private_jwk
        if how == "other":
            return self.other.public_jwk
        if how == "unknown":
            return {**public, "kty": "XYZ"}
        if how == "oct":
            return {"kty": "oct", "k": b64(b"a shared secret")}
        if how == "missing":
            return {k: v for k, v in public.items() if k not in ("x", "n")}
        if how == "numeric":
            return {**public, "x": 1, "n": 1} if public["kty"] == "RSA" else {**public, "x": 1}
        if how == "huge":
            return {**public, "x": "A" * 7000}
        if how == "crv":
            return {**public, "crv": "P-384"} if public["kty"] == "EC" else {**public, "crv": "X25519"}
        return public


def _pair(signer: Signer) -> KeyPair:
    return KeyPair(kid=signer.kid, key=signer.key)


def _resolved(value: Any, now: float) -> Any:
    if isinstance(value, Now):
        moment = now + value.offset
        return int(moment) if value.kind == "int" else moment if value.kind == "float" else str(int(moment))
    return value


def _damaged(text: str, how: str, at: int) -> str:
    if how == "b64":  # characters base64url has not, inside the header
        return text[: at % 10] + "!*" + text[at % 10 :]
    if how == "pad":
        return ".".join(part + "==" for part in text.split("."))
    if how == "space":
        return " " + text + "\t"
    if how == "segment":
        return text + ".eyJ4IjoxfQ"
    return mangle(text, how, at)
