"""The machine grants, for operator-registered clients (`registered`) only:

- **`client_credentials`**: a token for the client itself. It has no `sub`, so its principal is the kit's
  form for a client, `client:<facade issuer>#<client_id>` (`auth.identity`), which an app tells from a
  person's.
- **jwt-bearer with an ID-JAG** (`enterprise`): a token for the enterprise's user, principal
  `<IdP issuer>#<sub>` (the `idp_iss` claim, read by `resource_guard`), so an enterprise user never shares
  a principal with a facade sign-in of the same name.

Neither gets a refresh token: the client asks again (with a new assertion). The scopes are those asked
for (`scope`) that the client may have (its entry's `scope`); none asked, all of them. For an ID-JAG that
names scopes, only those are granted of these. The copied claims (`LAMBDA_MCP_AUTH_UPSTREAM_CLAIMS`) come
from the ID-JAG as from an upstream sign-in.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from .admission import copied
from .clients import Client
from .enterprise import EnterpriseIssuers
from .errors import OAuthError
from .resource_guard import ENTERPRISE_ISSUER_CLAIM

if TYPE_CHECKING:
    from .context import FacadeContext

Issue = Callable[..., Awaitable[dict[str, Any]]]


def granted(allowed: tuple[str, ...], asked: str | None, limit: str | None = None) -> list[str]:
    """The scopes to grant: those asked that are allowed (all allowed when none are asked), within
    `limit` when it is given; `OAuthError(invalid_scope)` when that leaves none of those asked."""
    wanted = [scope for scope in dict.fromkeys((asked or "").split()) if scope != "offline_access"]
    ceiling = [scope for scope in allowed if limit is None or scope in limit.split()]
    if not wanted:
        return ceiling
    scopes = [scope for scope in wanted if scope in ceiling]
    if not scopes:
        raise OAuthError("invalid_scope", "none of the requested scopes may be granted to this client")
    return scopes


class MachineGrants:
    def __init__(self, facade: FacadeContext, issue: Issue) -> None:
        self.f = facade
        self.issue = issue
        self.enterprise = EnterpriseIssuers(facade, facade.settings.auth_trusted_issuers)

    async def client_credentials(self, client: Client, fields: dict[str, str], jkt: str | None) -> dict[str, Any]:
        scopes = granted(client.scopes or (), fields.get("scope"))
        return await self.issue(client.client_id, scopes, {}, jkt)

    async def jwt_bearer(self, client: Client, fields: dict[str, str], jkt: str | None) -> dict[str, Any]:
        if not self.enterprise.trusted:
            raise OAuthError("unsupported_grant_type", "this server trusts no enterprise identity provider")
        claims = await self.enterprise.validate(fields.get("assertion") or "", client.client_id)
        limit = claims.get("scope") if isinstance(claims.get("scope"), str) else None
        scopes = granted(client.scopes or (), fields.get("scope") or limit, limit)
        user = {
            **copied(claims, self.f.settings.auth_upstream_claims),
            "sub": claims["sub"],
            ENTERPRISE_ISSUER_CLAIM: claims["iss"],
        }
        return await self.issue(client.client_id, scopes, user, jkt)
