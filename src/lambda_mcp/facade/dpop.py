"""DPoP proofs (RFC 9449): check one, at the token endpoint (to bind a token) and at `/mcp` (to use one).

A proof is a JWT in the `DPoP` header (exactly one): `typ` `dpop+jwt`, an asymmetric `alg`, the public
`jwk` it is signed with (never a private one), and the claims `jti`, `htm` (the request's method), `htu`
(the public URL, without query or fragment), `iat` (within `PAST_SECONDS` before and `SKEW_SECONDS` after
now), with `ath` (the SHA-256 of the access token) at `/mcp`, and the key's RFC 7638 thumbprint equal to
the token's `cnf.jkt`. Each `jti` works once: it is counted in the facade's table (a row per proof that
lives until its `iat` window has passed, so the replay cache needs nothing more than the table's TTL).

With `LAMBDA_MCP_AUTH_DPOP_NONCE=on` a proof must also carry a nonce the server gave (`DPoP-Nonce`):
stateless, an HMAC of the current `NONCE_SECONDS` window under a key derived from the state key, valid in
that window and the next. A proof without a current one is refused with `use_dpop_nonce` and a fresh nonce.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import time
from collections.abc import Callable, Sequence
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from ..storage.facade import FacadeStore
from .hashing import digest, key_text

ALGORITHMS = ("ES256", "ES384", "ES512", "RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "EdDSA")
PAST_SECONDS = 120
SKEW_SECONDS = 30
NONCE_SECONDS = 300
MAX_PROOF_BYTES = 8192
_THUMBPRINT_MEMBERS = {"EC": ("crv", "kty", "x", "y"), "RSA": ("e", "kty", "n"), "OKP": ("crv", "kty", "x")}


class DpopError(Exception):
    """A proof that is refused: `invalid_dpop_proof`, or `use_dpop_nonce` with the nonce to use."""

    def __init__(self, description: str, *, nonce: str | None = None) -> None:
        super().__init__(description)
        self.description = description
        self.nonce = nonce
        self.error = "use_dpop_nonce" if nonce is not None else "invalid_dpop_proof"


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def thumbprint(jwk: dict[str, Any]) -> str:
    """The RFC 7638 SHA-256 thumbprint of a public JWK (what a bound token's `cnf.jkt` holds)."""
    members = _THUMBPRINT_MEMBERS.get(str(jwk.get("kty")))
    if members is None or not all(isinstance(jwk.get(name), str) for name in members):
        raise DpopError("the proof's jwk is not a public EC, RSA or OKP key")
    canonical = json.dumps({name: jwk[name] for name in members}, separators=(",", ":"), sort_keys=True)
    return b64url(hashlib.sha256(canonical.encode()).digest())


def token_hash(access_token: str) -> str:
    """`ath`: the base64url SHA-256 of the access token."""
    return b64url(hashlib.sha256(access_token.encode()).digest())


def normalized(url: str) -> str | None:
    """`url` without query and fragment, scheme and host lower-cased, a default port left out (RFC 9449
    §4.3); None when it is not a URL (a bad port or IPv6 literal)."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return None
    host = (parts.hostname or "").lower()
    default = {"https": 443, "http": 80}.get(parts.scheme.lower())
    netloc = host if port in (None, default) else f"{host}:{port}"
    return urlunsplit((parts.scheme.lower(), netloc, parts.path or "/", "", ""))


class Nonces:
    """Stateless server nonces: the window number and its HMAC under a key the state key derives."""

    def __init__(self, keys: Callable[[], Sequence[bytes]], clock: Callable[[], float] = time.time) -> None:
        self._keys = keys
        self.clock = clock

    def _mac(self, key: bytes, window: int) -> str:
        return b64url(hmac.new(key, b"dpop nonce %d" % window, hashlib.sha256).digest()[:18])

    def current(self) -> str:
        keys = self._keys()
        if not keys:
            raise DpopError("no state key to make DPoP nonces with")
        window = int(self.clock() // NONCE_SECONDS)
        return f"{window}.{self._mac(keys[0], window)}"

    def valid(self, nonce: object) -> bool:
        if not isinstance(nonce, str) or "." not in nonce or len(nonce) > 64:
            return False
        window_text, _, mac = nonce.partition(".")
        if not (window_text.isascii() and window_text.isdigit()):
            return False
        window = int(window_text)
        if int(self.clock() // NONCE_SECONDS) - window not in (0, 1):
            return False
        return any(hmac.compare_digest(mac, self._mac(key, window)) for key in self._keys())


class Proofs:
    """Checks proofs for one deployment: its replay cache (the facade's table) and its nonce policy."""

    def __init__(self, store: FacadeStore, nonces: Nonces | None, clock: Callable[[], float] = time.time) -> None:
        self.store = store
        self.nonces = nonces
        self.clock = clock

    async def check(
        self,
        values: Sequence[str],
        method: str,
        url: str,
        *,
        access_token: str | None = None,
        jkt: str | None = None,
    ) -> str:
        """The thumbprint of the key that signed the one proof in `values`; raises `DpopError`."""
        if len(values) != 1:
            raise DpopError("send exactly one DPoP proof header")
        claims, key_thumbprint = _verified(values[0])
        now = self.clock()
        if claims.get("htm") != method.upper():
            raise DpopError("the proof's htm is not this request's method")
        htu = claims.get("htu")
        if not isinstance(htu, str) or len(htu) > 2048 or normalized(htu) != normalized(url):
            raise DpopError("the proof's htu is not this endpoint's URL")
        iat = claims.get("iat")
        if not isinstance(iat, int | float) or not now - PAST_SECONDS <= iat <= now + SKEW_SECONDS:
            raise DpopError("the proof's iat is missing or outside the accepted window")
        jti = claims.get("jti")
        if not key_text(jti) or len(str(jti)) < 8:
            raise DpopError("the proof's jti is missing or not 8 to 256 characters")
        if access_token is not None and claims.get("ath") != token_hash(access_token):
            raise DpopError("the proof's ath does not match the access token")
        if jkt is not None and not hmac.compare_digest(jkt, key_thumbprint):
            raise DpopError("the proof is not signed with the key the token is bound to")
        if self.nonces is not None and not self.nonces.valid(claims.get("nonce")):
            raise DpopError("a current DPoP nonce is required", nonce=self.nonces.current())
        if not await self.store.count("dpop", digest(key_thumbprint, str(jti)), 1, iat + PAST_SECONDS + 60, now):
            raise DpopError("the proof's jti was already used")
        return key_thumbprint


def _verified(proof: str) -> tuple[dict[str, Any], str]:
    """The claims of a proof whose signature verifies with its own `jwk`, and that key's thumbprint."""
    import jwt

    if len(proof) > MAX_PROOF_BYTES or proof.count(".") != 2:
        raise DpopError("the DPoP proof is not a JWT")
    try:
        header = jwt.get_unverified_header(proof)
    except jwt.InvalidTokenError:
        raise DpopError("the DPoP proof's header cannot be read") from None
    if header.get("typ") != "dpop+jwt":
        raise DpopError("the DPoP proof's typ is not dpop+jwt")
    algorithm, jwk = header.get("alg"), header.get("jwk")
    if algorithm not in ALGORITHMS:
        raise DpopError(f"the DPoP proof's alg must be one of {', '.join(ALGORITHMS)}")
    if not isinstance(jwk, dict) or "d" in jwk or "p" in jwk or "k" in jwk:
        raise DpopError("the DPoP proof's jwk must be a public key")
    key_thumbprint = thumbprint(jwk)
    try:
        key = jwt.PyJWK(jwk, algorithm=str(algorithm))
        claims: dict[str, Any] = jwt.decode(
            proof,
            key.key,
            algorithms=[str(algorithm)],
            options={"verify_aud": False, "verify_exp": False, "verify_iat": False, "verify_nbf": False},
        )
    except (jwt.PyJWTError, ValueError, TypeError):
        raise DpopError("the DPoP proof's signature does not verify with its jwk") from None
    return claims, key_thumbprint
