"""The guard of `/mcp` in `proxy` mode (also the REST API authorizer's): the facade's own tokens, for its
resource, their key taken from the signer (never fetched over HTTP), and DPoP.

- A token bound to a key (`cnf.jkt`, issued for a DPoP proof) must come as `Authorization: DPoP <token>`
  with a proof for this request (`dpop.Proofs`: method, the public MCP URL, `ath`, a fresh `jti`); sent as
  `Bearer`, or without a valid proof, it is refused 401 with a `DPoP` challenge (RFC 9449 §7.1).
- An unbound token comes as `Bearer`; `LAMBDA_MCP_AUTH_DPOP=required` refuses it.
- The REST API's token authorizer sees only the `Authorization` header, so it checks the token and its
  scheme but not the proof (`proofs` None): the function behind it checks the proof.

The principal of an enterprise user's token (the jwt-bearer grant) is `<IdP issuer>#<sub>`, read from the
token's `idp_iss` claim, which only the facade writes (`admission.RESERVED`: never copied from an upstream).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..auth.fetch import Deadline, FetchError
from ..auth.guard import BearerGuard, Denied
from ..auth.identity import Identity
from ..config import Settings
from .dpop import DpopError, Proofs
from .signing import Signer, SigningError, jwks, signer_for

if TYPE_CHECKING:
    from ..auth.tokens import TokenValidator

ENTERPRISE_ISSUER_CLAIM = "idp_iss"


def token_guard(settings: Settings, signer: Signer | None = None, proofs: Proofs | None = None) -> FacadeGuard:
    """The facade's guard; `proofs` None checks no DPoP proof (the REST API authorizer)."""
    from ..auth.issuer import Issuer
    from ..auth.tokens import TokenValidator

    issuer_url, resource = settings.auth_issuer, settings.proxy_resource
    assert issuer_url and resource, "Settings.check ensures proxy mode names its resource"
    signer = signer or signer_for(settings.auth_signing_key, settings.auth_signing_key_id)

    def keys(url: str, deadline: Deadline) -> dict[str, Any]:
        try:
            return jwks(signer)
        except SigningError as exc:  # KMS unreachable or denied: 503 and a retry, as for an issuer that is down
            raise FetchError(str(exc)) from None

    issuer = Issuer(issuer_url, jwks_url=issuer_url + "/oauth/jwks", fetch=keys)
    validator = TokenValidator(issuer, token_type="at+jwt")
    return FacadeGuard(validator, frozenset(settings.auth_scopes), resource, proofs, settings.auth_dpop == "required")


def _scheme(authorization: str | None) -> tuple[str, str] | None:
    scheme, _, token = (authorization or "").strip().partition(" ")
    token = token.strip()
    if scheme.lower() not in ("bearer", "dpop") or not token or " " in token:
        return None
    return scheme.lower(), token


class FacadeGuard(BearerGuard):
    def __init__(
        self,
        validator: TokenValidator,
        scopes: frozenset[str],
        resource: str,
        proofs: Proofs | None,
        required: bool,
    ) -> None:
        super().__init__(validator, scopes, resource)
        self.resource = resource
        self.proofs = proofs
        self.required = required

    async def authenticate(
        self, headers: Mapping[str, str], event: object, audience: str, method: str = "POST"
    ) -> Identity | None:
        presented = _scheme(headers.get("authorization"))
        if presented is None:
            raise Denied(401, "no access token: send Authorization: Bearer <token> (or DPoP <token> with a proof)")
        scheme, token = presented
        bearer = {"authorization": "Bearer " + token}
        identity = await super().authenticate(bearer, event, audience, method)
        assert identity is not None
        claims = identity.claims
        confirmation = claims.get("cnf")
        jkt = confirmation.get("jkt") if isinstance(confirmation, dict) else None
        if isinstance(jkt, str):
            if scheme != "dpop":
                raise Denied(401, "this token is DPoP-bound: send it as DPoP <token>", "invalid_token", scheme="DPoP")
            if self.proofs is not None:
                await self._proof(headers, method, token, jkt)
        elif scheme == "dpop":
            raise Denied(401, "this token is not DPoP-bound: send it as Bearer <token>", "invalid_token")
        elif self.required:
            description = "this server accepts DPoP-bound tokens only: get one with a DPoP proof"
            raise Denied(401, description, "invalid_token", scheme="DPoP")
        enterprise = claims.get(ENTERPRISE_ISSUER_CLAIM)
        if isinstance(enterprise, str) and isinstance(claims.get("sub"), str):
            return Identity(f"{enterprise}#{claims['sub']}", identity.scopes, claims)
        return identity

    async def _proof(self, headers: Mapping[str, str], method: str, token: str, jkt: str) -> None:
        assert self.proofs is not None
        getlist = getattr(headers, "getlist", None)
        values = list(getlist("dpop")) if getlist is not None else [v for v in [headers.get("dpop")] if v]
        try:
            await self.proofs.check(values, method, self.resource, access_token=token, jkt=jkt)
        except DpopError as exc:
            raise Denied(401, exc.description, exc.error, scheme="DPoP", nonce=exc.nonce) from None
