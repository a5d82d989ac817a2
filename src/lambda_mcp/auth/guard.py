"""The auth modes: authenticate one HTTP request and say who it is, or why it is refused.

- `none`: no identity; scopes are not enforced.
- `jwt`: the kit validates the `Authorization: Bearer` token (`tokens.TokenValidator`).
- `gateway`: API Gateway or a Function URL authenticated the caller; the identity is on the event.

A refusal is a `Denied` with its HTTP status (401 no or bad credentials, 403 missing scopes, 503 the
issuer's keys are unreachable, with when to retry); the transport turns it into a response with a
`WWW-Authenticate` challenge. Refusals are logged at info, never with the token; their descriptions
are fixed text, never anything the request carried.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Protocol

from ..config import ConfigError, Settings
from .gateway import gateway_identity
from .identity import Identity

if TYPE_CHECKING:
    from .issuer import Issuer
    from .tokens import TokenValidator

logger = logging.getLogger("lambda_mcp.auth")


class Denied(Exception):
    """A refused request: its HTTP status, why, the RFC 6750 `error` code, and (403) the scopes needed."""

    def __init__(
        self,
        status: int,
        description: str,
        error: str | None = None,
        scopes: frozenset[str] = frozenset(),
        retry_after: int | None = None,
        *,
        scheme: str = "Bearer",
        nonce: str | None = None,
    ):
        super().__init__(description)
        self.status = status
        self.description = description
        self.error = error
        """`invalid_token` (a token that fails validation), `insufficient_scope` (403), or None (no credentials)."""
        self.scopes = scopes
        """For 403: every scope the operation needs."""
        self.retry_after = retry_after
        """For 503: seconds until the kit tries the issuer again."""
        self.scheme = scheme
        """The challenge's scheme: `DPoP` for a refused proof or a DPoP-bound token (RFC 9449 §7.1)."""
        self.nonce = nonce
        """For `use_dpop_nonce`: the nonce to send back in `DPoP-Nonce`."""


class Guard(Protocol):
    mode: str

    async def authenticate(
        self, headers: Mapping[str, str], event: object, audience: str, method: str = "POST"
    ) -> Identity | None:
        """The caller (None: anonymous, auth `none`); raises `Denied`. `method`: the request's (DPoP)."""


class OpenGuard:
    mode = "none"

    async def authenticate(
        self, headers: Mapping[str, str], event: object, audience: str, method: str = "POST"
    ) -> Identity | None:
        return None


def _require(identity: Identity, scopes: frozenset[str]) -> Identity:
    missing = identity.missing(scopes)
    if missing:
        raise Denied(403, "the token lacks a scope this server requires", "insufficient_scope", scopes)
    return identity


class BearerGuard:
    """Auth `jwt`: every request carries a bearer token the kit validates itself."""

    mode = "jwt"

    def __init__(self, validator: TokenValidator, scopes: frozenset[str], audience: str | None) -> None:
        self.validator = validator
        self.scopes = scopes
        self.audience = audience

    async def authenticate(
        self, headers: Mapping[str, str], event: object, audience: str, method: str = "POST"
    ) -> Identity | None:
        from .issuer import IssuerUnavailable
        from .tokens import TokenError

        token = bearer_token(headers.get("authorization"))
        if token is None:
            raise Denied(401, "no bearer token: send Authorization: Bearer <access token>")
        try:
            identity = await self.validator.validate(token, self.audience or audience)
        except TokenError as exc:
            raise Denied(401, str(exc), "invalid_token") from None
        except IssuerUnavailable as exc:
            logger.error("auth: the issuer's signing keys are unavailable: %s", exc)
            description = "the authorization server's keys are unavailable; try again"
            raise Denied(503, description, retry_after=exc.retry_after) from None
        return _require(identity, self.scopes)


class GatewayGuard:
    """Auth `gateway`: API Gateway (JWT, Lambda or IAM authorizer) or a Function URL (IAM) authenticated
    the caller; an event without an identity is refused, never served anonymously."""

    mode = "gateway"

    def __init__(self, scopes: frozenset[str]) -> None:
        self.scopes = scopes

    async def authenticate(
        self, headers: Mapping[str, str], event: object, audience: str, method: str = "POST"
    ) -> Identity | None:
        identity = gateway_identity(event)
        if identity is None:
            raise Denied(401, "the request carries no identity from an API Gateway or Function URL authorizer")
        return _require(identity, self.scopes)


def bearer_token(authorization: str | None) -> str | None:
    """The token of an `Authorization: Bearer <token>` header (the scheme is case-insensitive)."""
    if not authorization:
        return None
    scheme, _, token = authorization.strip().partition(" ")
    token = token.strip()
    return token if scheme.lower() == "bearer" and token and " " not in token else None


def log_denial(denied: Denied, request: Mapping[str, Any]) -> None:
    """One info line per refusal: status, reason and where from; the credentials themselves never."""
    logger.info(
        "auth: refused %s %s with %d (%s): %s",
        request.get("method", "?"),
        request.get("path", "?"),
        denied.status,
        denied.error or "no credentials",
        denied.description,
    )


def issuer_for(settings: Settings) -> Issuer | None:
    """The configured authorization server (its metadata and keys, fetched on demand), if any."""
    if not settings.auth_issuer:
        return None
    from .issuer import Issuer

    return Issuer(settings.auth_issuer, jwks_url=settings.auth_jwks_url)


def guard_for(settings: Settings, issuer: Issuer | None = None) -> Guard:
    """The auth mode's guard (`issuer`: the one to share, else one is made); the JWT library is imported
    only for `jwt`."""
    scopes = frozenset(settings.auth_scopes)
    if settings.auth == "jwt":
        settings.check()
        try:
            from .tokens import TokenValidator
        except ImportError as exc:
            raise ConfigError(f"LAMBDA_MCP_AUTH=jwt needs PyJWT: pip install 'lambda-mcp[auth]' ({exc})") from None
        issuer = issuer or issuer_for(settings)
        assert issuer is not None  # checked above
        validator = TokenValidator(
            issuer, cognito_client_ids=settings.auth_cognito_client_ids, token_type=settings.auth_token_type
        )
        return BearerGuard(validator, scopes, settings.auth_audience or settings.resource_url)
    if settings.auth == "gateway":
        return GatewayGuard(scopes)
    if settings.auth == "proxy":  # fail closed: the facade's guard is the only one for its tokens
        raise ConfigError("LAMBDA_MCP_AUTH=proxy: the guard comes from the authorization facade (build_kit wires it)")
    return OpenGuard()
