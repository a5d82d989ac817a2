"""Validate OAuth 2.1 bearer tokens (JWT access tokens) for auth `jwt`.

Checks, in order: size and shape; an allow-listed asymmetric algorithm (RS*, PS*, ES*; never `none`
or HMAC, so a public key can never act as a shared secret); a signing key from the issuer's JWKS
whose type (and curve) fits the algorithm; the signature; `iss`; `exp` and `nbf` with a small skew;
the audience (the server's canonical URL, RFC 8707) or, for Amazon Cognito access tokens (no `aud`),
`token_use=access` and an allowed `client_id`; and a subject to bind state to.

The issuer's keys come from `issuer.Issuer` (fetched once, refreshed hourly, failures remembered; see
there). Nothing a token carries is ever echoed: `TokenError` messages are fixed text. With
`token_type` set (`LAMBDA_MCP_AUTH_TOKEN_TYPE=at+jwt`), the header's `typ` must be that type (RFC 9068
§4). PyJWT is imported here only, and this module only in `jwt` mode.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable, Mapping
from typing import Any

import jwt

from .identity import Identity, jwt_principal, scopes_of
from .issuer import Issuer

ALGORITHMS = frozenset({"RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512"})
_KEY_TYPE = {"R": "RSA", "P": "RSA", "E": "EC"}
_CURVE = {"ES256": "P-256", "ES384": "P-384", "ES512": "P-521"}
MAX_TOKEN_BYTES = 16_384
logger = logging.getLogger("lambda_mcp.auth")


class TokenError(Exception):
    """The token is not acceptable (answered 401 `invalid_token`); the message says why, never echoing it."""


def key_fits(key: Mapping[str, Any], algorithm: str) -> bool:
    if key.get("use", "sig") != "sig" or key.get("alg", algorithm) != algorithm:
        return False
    if key.get("kty") != _KEY_TYPE[algorithm[0]]:
        return False
    return algorithm not in _CURVE or key.get("crv") == _CURVE[algorithm]


class TokenValidator:
    def __init__(
        self,
        issuer: Issuer,
        *,
        cognito_client_ids: Iterable[str] = (),
        token_type: str | None = None,
        leeway_seconds: float = 30.0,
    ) -> None:
        self.issuer = issuer
        self.leeway_seconds = leeway_seconds
        self.cognito_client_ids = frozenset(cognito_client_ids)
        self.token_type = _media_type(token_type) if token_type else None
        self._parsed: dict[tuple[str, str], tuple[dict[str, Any], jwt.PyJWK]] = {}

    async def key(self, kid: str | None, algorithm: str) -> jwt.PyJWK:
        """The issuer's key for the token (fetched in a worker thread when it is not held yet)."""
        found = self.issuer.cached(kid, algorithm, key_fits)
        if found is None:
            found = await asyncio.to_thread(self.issuer.load, kid, algorithm, key_fits)
        if found is None:
            raise TokenError("no key of the issuer matches the token's kid and algorithm")
        cache_key = (str(found.get("kid")), algorithm)
        parsed = self._parsed.get(cache_key)
        if parsed is None or parsed[0] is not found:  # the key set was replaced since
            try:
                parsed = (found, jwt.PyJWK(found, algorithm=algorithm))
            except (jwt.PyJWKError, jwt.InvalidKeyError, ValueError):
                raise TokenError("the issuer's key does not fit the token's algorithm") from None
            self._parsed[cache_key] = parsed
        return parsed[1]

    async def validate(self, token: str, audience: str) -> Identity:
        """The identity a valid token names; raises `TokenError` (or `IssuerUnavailable`) otherwise."""
        if len(token) > MAX_TOKEN_BYTES or token.count(".") != 2:
            raise TokenError("the token is not a JWT")
        try:
            header = jwt.get_unverified_header(token)
        except jwt.InvalidTokenError:
            raise TokenError("the token's header cannot be read") from None
        algorithm = header.get("alg")
        if not isinstance(algorithm, str) or algorithm not in ALGORITHMS:
            raise TokenError(f"the token's algorithm is not accepted (accepted: {', '.join(sorted(ALGORITHMS))})")
        if self.token_type is not None:
            typ = header.get("typ")
            if not isinstance(typ, str) or _media_type(typ) != self.token_type:
                raise TokenError(f"the token's type (typ) is not {self.token_type}")
        kid = header.get("kid")
        key = await self.key(kid if isinstance(kid, str) else None, algorithm)
        try:
            claims: dict[str, Any] = jwt.decode(
                token,
                key=key.key,
                algorithms=[algorithm],
                issuer=self.issuer.url,
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


def _media_type(value: str) -> str:
    """`at+jwt` for `at+jwt` and `application/at+jwt` alike (RFC 9068 §4: the prefix is optional)."""
    lowered = value.strip().lower()
    return lowered.removeprefix("application/")
