"""Enterprise-Managed Authorization: validate an ID-JAG (draft-ietf-oauth-identity-assertion-authz-grant),
the identity assertion an enterprise's identity provider issues so a client may get a token for its user.

The IdPs trusted are `LAMBDA_MCP_AUTH_TRUSTED_ISSUERS` (issuer URLs); each one's keys come from its
metadata (`jwks_uri`), fetched and kept as the kit keeps any issuer's (`auth.issuer`). An ID-JAG must have:
header `typ` `oauth-id-jag+jwt` and an asymmetric signature by the IdP; `iss` a trusted issuer; `aud` the
facade's issuer; `resource` this MCP server; `client_id` the client that authenticated to present it;
`sub`, `exp` (at most an hour away) and `jti`, which works once (counted in the facade's table until
the assertion expires).
The `LAMBDA_MCP_AUTH_UPSTREAM_REQUIRE` conditions apply to its claims, as to an upstream sign-in's.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .admission import admitted
from .errors import OAuthError
from .hashing import digest, key_text

if TYPE_CHECKING:
    from ..auth.tokens import TokenValidator
    from .context import FacadeContext

ID_JAG_TYPE = "oauth-id-jag+jwt"
GRANT_PROFILE = "urn:ietf:params:oauth:grant-profile:id-jag"
MAX_ASSERTION_BYTES = 16_384
MAX_LIFETIME_SECONDS = 3600
"""An ID-JAG is short-lived (minutes): one that claims to last longer than this is refused."""


def _refused(description: str) -> OAuthError:
    return OAuthError("invalid_grant", description)


class EnterpriseIssuers:
    def __init__(self, facade: FacadeContext, trusted: tuple[str, ...]) -> None:
        self.f = facade
        self.trusted = frozenset(issuer.rstrip("/") for issuer in trusted) | frozenset(trusted)
        self._validators: dict[str, TokenValidator] = {}

    def _validator(self, issuer: str) -> TokenValidator:
        validator = self._validators.get(issuer)
        if validator is None:
            from ..auth.issuer import Issuer
            from ..auth.tokens import TokenValidator

            validator = self._validators.setdefault(issuer, TokenValidator(Issuer(issuer), token_type=ID_JAG_TYPE))
        return validator

    async def validate(self, assertion: str, client_id: str) -> dict[str, Any]:
        """The claims of a valid ID-JAG presented by `client_id`; `OAuthError` otherwise (503 when the
        IdP's keys cannot be fetched)."""
        import jwt

        from ..auth.issuer import IssuerUnavailable
        from ..auth.tokens import TokenError

        if not assertion or len(assertion) > MAX_ASSERTION_BYTES or assertion.count(".") != 2:
            raise OAuthError("invalid_request", "assertion must be an ID-JAG (a JWT)")
        try:
            issuer = jwt.decode(assertion, options={"verify_signature": False}).get("iss")
        except jwt.PyJWTError:
            raise _refused("the assertion cannot be read") from None
        if not isinstance(issuer, str) or issuer not in self.trusted:
            raise _refused("the assertion's issuer is not an identity provider this server trusts")
        try:
            identity = await self._validator(issuer).validate(assertion, self.f.issuer)
        except TokenError as exc:
            raise _refused(f"the ID-JAG is not acceptable: {exc}") from None
        except IssuerUnavailable as exc:
            raise OAuthError("temporarily_unavailable", "the identity provider's keys are unavailable", 503) from exc
        claims = dict(identity.claims)
        resource = claims.get("resource")
        resources = resource if isinstance(resource, list) else [resource]
        if self.f.resource not in resources:
            raise _refused("the ID-JAG is for another resource")
        if claims.get("client_id") != client_id:
            raise _refused("the ID-JAG was issued to another client")
        subject, jti, expires = claims.get("sub"), claims.get("jti"), claims.get("exp")
        if not key_text(subject):
            raise _refused("the ID-JAG's sub must be 1 to 256 characters of text")
        if not key_text(jti):
            raise _refused("the ID-JAG needs a jti of 1 to 256 characters")
        now = self.f.clock()
        if not isinstance(expires, int | float) or not expires <= now + MAX_LIFETIME_SECONDS:
            raise _refused(f"the ID-JAG must expire within {MAX_LIFETIME_SECONDS} seconds")
        if not await self.f.store.count("id-jag", digest(issuer, str(jti)), 1, float(expires) + 60, now):
            raise _refused("the ID-JAG was already used")
        if not admitted(claims, self.f.settings.auth_upstream_require):
            raise _refused("the user does not meet this server's sign-in conditions")
        return claims
