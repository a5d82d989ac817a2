"""Validate OAuth 2.1 bearer tokens (JWT access tokens) for auth `jwt`.

Checks, in order: size and shape; an allow-listed asymmetric algorithm (RS*, PS*, ES*; never `none`
or HMAC, so a public key can never act as a shared secret); a signing key from the issuer's JWKS
whose type (and curve) fits the algorithm; the signature; `iss`; `exp` and `nbf` with a small skew;
the audience (the server's canonical URL, RFC 8707) or, for Amazon Cognito access tokens (no `aud`),
`token_use=access` and an allowed `client_id`; and a subject to bind state to.

The JWKS is fetched once (from the issuer's metadata `jwks_uri`, or a configured URL) and cached for
the life of the execution environment; a token naming an unknown `kid` refetches it at most once per
`refresh_seconds`. PyJWT is imported here only, and this module only in `jwt` mode.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import jwt

from .fetch import FetchError, fetch_json, issuer_metadata
from .identity import Identity, jwt_principal, scopes_of

ALGORITHMS = frozenset({"RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512"})
_KEY_TYPE = {"R": "RSA", "P": "RSA", "E": "EC"}
_CURVE = {"ES256": "P-256", "ES384": "P-384", "ES512": "P-521"}
MAX_TOKEN_BYTES = 16_384
logger = logging.getLogger("lambda_mcp.auth")


class TokenError(Exception):
    """The token is not acceptable (answered 401 `invalid_token`); the message says why, never echoing it."""


class KeysUnavailable(Exception):
    """The issuer's keys could not be fetched (answered 503: a server-side problem, not the client's)."""


class _KeySet:
    """The issuer's signing keys by `kid`, fetched on first use and again (rate-limited) for an unknown `kid`."""

    def __init__(
        self,
        locate: Callable[[], str],
        fetch: Callable[[str], dict[str, Any]],
        refresh_seconds: float,
    ) -> None:
        self._locate = locate
        self._fetch = fetch
        self._refresh_seconds = refresh_seconds
        self._keys: list[dict[str, Any]] = []
        self._fetched_at: float | None = None
        self._lock = threading.Lock()
        self._parsed: dict[tuple[str, str], jwt.PyJWK] = {}
        self.fetches = 0

    def _refresh(self, stale_at: float | None) -> None:
        """Fetch the JWKS unless another thread did since `stale_at` (or one was fetched too recently)."""
        with self._lock:
            if self._fetched_at != stale_at:
                return  # another request refreshed meanwhile
            if stale_at is not None and time.monotonic() - stale_at < self._refresh_seconds:
                return
            self._fetched_at = time.monotonic()
            self.fetches += 1
            try:
                document = self._fetch(self._locate())
            except FetchError as exc:
                if stale_at is not None:  # keep the keys we have; the unknown kid stays unknown
                    logger.warning("refreshing the issuer's keys failed: %s", exc)
                    return
                self._fetched_at = None  # nothing cached: the next request tries again
                raise KeysUnavailable(str(exc)) from None
            keys = document.get("keys")
            self._keys = [k for k in keys if isinstance(k, dict)] if isinstance(keys, list) else []
            self._parsed.clear()

    async def key(self, kid: str | None, algorithm: str) -> jwt.PyJWK:
        if self._fetched_at is None:
            await asyncio.to_thread(self._refresh, None)
        found = self._find(kid, algorithm)
        if found is None and kid is not None:
            await asyncio.to_thread(self._refresh, self._fetched_at)
            found = self._find(kid, algorithm)
        if found is None:
            raise TokenError("no key of the issuer matches the token's kid and algorithm")
        cache_key = (str(found.get("kid")), algorithm)
        parsed = self._parsed.get(cache_key)
        if parsed is None:
            try:
                parsed = jwt.PyJWK(found, algorithm=algorithm)
            except (jwt.PyJWKError, jwt.InvalidKeyError, ValueError):
                raise TokenError("the issuer's key does not fit the token's algorithm") from None
            self._parsed[cache_key] = parsed
        return parsed

    def _find(self, kid: str | None, algorithm: str) -> dict[str, Any] | None:
        fitting = [k for k in self._keys if _fits(k, algorithm)]
        if kid is None:
            return fitting[0] if len(fitting) == 1 else None
        return next((k for k in fitting if k.get("kid") == kid), None)


def _fits(key: Mapping[str, Any], algorithm: str) -> bool:
    if key.get("use", "sig") != "sig" or key.get("alg", algorithm) != algorithm:
        return False
    if key.get("kty") != _KEY_TYPE[algorithm[0]]:
        return False
    return algorithm not in _CURVE or key.get("crv") == _CURVE[algorithm]


class TokenValidator:
    def __init__(
        self,
        issuer: str,
        *,
        jwks_url: str | None = None,
        cognito_client_ids: Iterable[str] = (),
        leeway_seconds: float = 30.0,
        refresh_seconds: float = 60.0,
        fetch: Callable[[str], dict[str, Any]] = fetch_json,
        metadata: Callable[[str], dict[str, Any]] = issuer_metadata,
    ) -> None:
        self.issuer = issuer
        self.leeway_seconds = leeway_seconds
        self.cognito_client_ids = frozenset(cognito_client_ids)
        self._jwks_url = jwks_url
        self._metadata = metadata
        self.keys = _KeySet(self._locate_jwks, fetch, refresh_seconds)

    def _locate_jwks(self) -> str:
        if self._jwks_url is None:
            uri = self._metadata(self.issuer).get("jwks_uri")
            if not isinstance(uri, str):
                raise FetchError(f"the metadata of {self.issuer} names no jwks_uri")
            self._jwks_url = uri
        return self._jwks_url

    async def validate(self, token: str, audience: str) -> Identity:
        """The identity a valid token names; raises `TokenError` (or `KeysUnavailable`) otherwise."""
        if len(token) > MAX_TOKEN_BYTES or token.count(".") != 2:
            raise TokenError("the token is not a JWT")
        try:
            header = jwt.get_unverified_header(token)
        except jwt.InvalidTokenError:
            raise TokenError("the token's header cannot be read") from None
        algorithm = header.get("alg")
        if not isinstance(algorithm, str) or algorithm not in ALGORITHMS:
            raise TokenError(f"the token's algorithm {algorithm!r} is not accepted")
        kid = header.get("kid")
        key = await self.keys.key(kid if isinstance(kid, str) else None, algorithm)
        try:
            claims: dict[str, Any] = jwt.decode(
                token,
                key=key.key,
                algorithms=[algorithm],
                issuer=self.issuer,
                leeway=self.leeway_seconds,
                options={"require": ["exp", "iss"], "verify_aud": False},
            )
        except jwt.ExpiredSignatureError:
            raise TokenError("the token has expired") from None
        except jwt.ImmatureSignatureError:
            raise TokenError("the token is not valid yet") from None
        except jwt.InvalidIssuerError:
            raise TokenError("the token was issued by another issuer") from None
        except jwt.InvalidSignatureError:
            raise TokenError("the token's signature does not verify") from None
        except jwt.InvalidTokenError as exc:
            raise TokenError(f"the token is invalid ({type(exc).__name__})") from None
        self._check_audience(claims, audience)
        principal = jwt_principal(claims)
        if principal is None:
            raise TokenError("the token names no subject")
        return Identity(principal, scopes_of(claims.get("scope") or claims.get("scp")), claims)

    def _check_audience(self, claims: Mapping[str, Any], audience: str) -> None:
        aud = claims.get("aud")
        if aud is None and self.cognito_client_ids:
            if claims.get("token_use") != "access":
                raise TokenError("the token is not an access token")
            if claims.get("client_id") not in self.cognito_client_ids:
                raise TokenError("the token was issued to a client this server does not accept")
            return
        audiences = [aud] if isinstance(aud, str) else aud if isinstance(aud, list) else []
        if audience not in audiences:
            raise TokenError("the token was issued for another resource (audience)")
