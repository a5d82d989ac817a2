"""`POST /oauth/token` (the `authorization_code` and `refresh_token` grants, the machine grants of
`machine`, and the tokens they issue) and `POST /oauth/revoke` (RFC 7009).

- **Client authentication** (`client_auth`): `client_secret_basic`, `client_secret_post`,
  `private_key_jwt` (operator clients), or none (a public client names itself with `client_id`); a
  confidential client must authenticate. A client that registered `grant_types` gets only those (no
  refresh token without `refresh_token`); a DCR or document client that left the field out gets
  `authorization_code` and `refresh_token`, never a machine grant.
- **DPoP** (`dpop`): a token request with a valid proof gets a token bound to its key (`cnf.jkt`,
  `token_type` `DPoP`); a public client's refresh token is bound too, and refreshes only with a proof
  by the same key. `LAMBDA_MCP_AUTH_DPOP=required` refuses a token request without a proof.
- **Codes** are marked used (`used:<family>`) before anything else is checked, so a code works once,
  whatever the outcome; then the client, `redirect_uri`, PKCE verifier and `resource` must match. A code
  presented again by its client revokes the sign-in its first use started (RFC 6749 §4.1.2): the replay
  marks the code `replayed:<family>` and ends the family, and the first use, once its family is
  written, reads the mark back, so whichever of the two is later ends it.
- **Refresh tokens** rotate (`families`).
- **Access tokens** are ES256 JWTs (`typ` `at+jwt`) for the MCP resource, `ACCESS_SECONDS` long, with
  the upstream user's `sub`, the client, the granted scopes, the sign-in (`sid`) and the claims copied
  from the upstream (`LAMBDA_MCP_AUTH_UPSTREAM_CLAIMS`).
- **Revocation** of a refresh token, or of an access token, ends its sign-in: no refresh works after
  it. An access token already issued stays valid until it expires (at most `ACCESS_SECONDS`): `/mcp`
  checks tokens without a table read.
"""

from __future__ import annotations

import asyncio
import secrets
from typing import TYPE_CHECKING, Any

from starlette.requests import Request

from .client_auth import ClientAuthentication
from .clients import Client
from .dpop import DpopError, Proofs
from .errors import OAuthError
from .families import BAD_GRANT, Grant
from .hashing import digest, s256
from .machine import MachineGrants
from .registered import JWT_BEARER, MACHINE_GRANTS, Registry
from .signing import mint, verify

if TYPE_CHECKING:
    from .context import FacadeContext

ACCESS_SECONDS = 3600
MARKED_SECONDS = 60
"""How long a used code stays marked: as long as it could be presented (a code lives 60 s)."""


GRANT_TYPES = ("authorization_code", "refresh_token", *MACHINE_GRANTS)


class Grants:
    def __init__(self, facade: FacadeContext, registry: Registry, proofs: Proofs | None = None) -> None:
        self.f = facade
        self.proofs = proofs
        """DPoP proofs at the token endpoint (None: `LAMBDA_MCP_AUTH_DPOP=off`)."""
        self.authentication = ClientAuthentication(facade, registry)
        self.machine = MachineGrants(facade, self.issue)

    async def token(self, request: Request, fields: dict[str, str]) -> dict[str, Any]:
        client = await self.authentication.client(request, fields)
        grant = fields.get("grant_type")
        if grant not in GRANT_TYPES:
            raise OAuthError("unsupported_grant_type", f"grant_type must be one of {', '.join(GRANT_TYPES)}")
        if not client.allows(grant):
            raise OAuthError("unauthorized_client", f"the client may not use the {grant} grant")
        if fields.get("resource", self.f.resource) != self.f.resource:
            raise OAuthError("invalid_target", "resource must be this MCP server's URL")
        jkt = await self._proof(request)
        if grant == "authorization_code":
            return await self._code(client, fields, jkt)
        if grant == "refresh_token":
            return await self._refresh(client, fields, jkt)
        if grant == JWT_BEARER:
            return await self.machine.jwt_bearer(client, fields, jkt)
        return await self.machine.client_credentials(client, fields, jkt)

    async def _proof(self, request: Request) -> str | None:
        """The thumbprint of the DPoP key to bind the token to (None: no proof sent)."""
        values = request.headers.getlist("dpop")
        if self.proofs is None or not values:
            if self.f.settings.auth_dpop == "required":
                raise OAuthError("invalid_dpop_proof", "this server issues DPoP-bound tokens only: send a DPoP proof")
            return None
        try:
            return await self.proofs.check(values, "POST", self.f.issuer + "/oauth/token")
        except DpopError as exc:
            headers = {"DPoP-Nonce": exc.nonce} if exc.nonce is not None else None
            raise OAuthError(exc.error, exc.description, headers=headers) from None

    async def _code(self, client: Client, fields: dict[str, str], jkt: str | None) -> dict[str, Any]:
        code = fields.get("code")
        if not code or len(code) > 512:
            raise OAuthError("invalid_request", "code is required")
        key, now = digest(code), self.f.clock()
        found = await self.f.store.get("code", key, now)
        if found is None or found[0]["client_id"] != client.client_id:
            raise OAuthError("invalid_grant", BAD_GRANT)
        row, mark = found
        family = str(row.get("family") or secrets.token_urlsafe(18))
        if mark or not await self.f.store.swap("code", key, "", row, now + MARKED_SECONDS, f"used:{family}", now):
            await self._replayed(key, row, now)
            raise OAuthError("invalid_grant", BAD_GRANT)
        if fields.get("redirect_uri", row["redirect_uri"]) != row["redirect_uri"]:
            raise OAuthError("invalid_grant", "redirect_uri differs from the one the code was issued for")
        verifier = fields.get("code_verifier")
        if not verifier or not 43 <= len(verifier) <= 128 or s256(verifier) != row["challenge"]:
            raise OAuthError("invalid_grant", "the PKCE code_verifier does not match the code_challenge")
        refresh = None
        if client.allows("refresh_token"):  # a public client's refresh token is bound to its DPoP key too
            bound = jkt if client.auth_method == "none" else None
            refresh = await self.f.families.start(family, client.client_id, row["subject"], row["scopes"], row, bound)
            if await self._was_replayed(key, family):  # a replay between the mark and the family's write
                await self.f.families.end(family)
                raise OAuthError("invalid_grant", BAD_GRANT)
        grant = Grant(family, client.client_id, row["subject"], row["scopes"], row.get("claims") or {}, refresh)
        return await self._tokens(grant, row["scopes"], jkt)

    async def _replayed(self, key: str, row: dict[str, Any], now: float) -> None:
        """A code seen again: end the sign-in its first use started (the client is the code's own)."""
        again = await self.f.store.get("code", key, now)
        mark = again[1] if again is not None else ""
        if mark.startswith("used:"):
            family = mark.removeprefix("used:")
            await self.f.store.swap("code", key, mark, row, now + MARKED_SECONDS, f"replayed:{family}", now)
            await self.f.families.end(family)
        elif mark.startswith("replayed:"):  # an earlier replay marked it; its end may not have landed
            await self.f.families.end(mark.removeprefix("replayed:"))

    async def _was_replayed(self, key: str, family: str) -> bool:
        found = await self.f.store.get("code", key, self.f.clock())
        return found is not None and found[1] == f"replayed:{family}"

    async def _refresh(self, client: Client, fields: dict[str, str], jkt: str | None) -> dict[str, Any]:
        token = fields.get("refresh_token") or ""
        if "." not in token or len(token) > 512:
            raise OAuthError("invalid_request", "refresh_token is required")
        grant = await self.f.families.rotate(client.client_id, token, jkt)
        scopes = grant.scopes
        asked = [scope for scope in (fields.get("scope") or "").split() if scope != "offline_access"]
        if asked:
            if not set(asked) <= set(scopes):
                raise OAuthError("invalid_scope", "a refresh may ask only for scopes already granted")
            scopes = asked
        return await self._tokens(grant, scopes, jkt)

    async def _tokens(self, grant: Grant, scopes: list[str], jkt: str | None) -> dict[str, Any]:
        claims = {**grant.claims, "sub": grant.subject, "sid": grant.family}
        return await self.issue(grant.client_id, scopes, claims, jkt, grant.refresh_token)

    async def issue(
        self,
        client_id: str,
        scopes: list[str],
        claims: dict[str, Any],
        jkt: str | None = None,
        refresh_token: str | None = None,
    ) -> dict[str, Any]:
        """The token response: an access token for the MCP resource with `claims` (`sub`, `sid`, copied
        ones), bound to the DPoP key `jkt` when there is one."""
        now = int(self.f.clock())
        claims = {
            **claims,
            "iss": self.f.issuer,
            "aud": self.f.resource,
            "client_id": client_id,
            "scope": " ".join(scopes),
            "iat": now,
            "exp": now + ACCESS_SECONDS,
            "jti": secrets.token_urlsafe(12),
        }
        if jkt is not None:
            claims["cnf"] = {"jkt": jkt}
        access = await asyncio.to_thread(mint, self.f.signer, claims)
        answer: dict[str, Any] = {
            "access_token": access,
            "token_type": "DPoP" if jkt is not None else "Bearer",
            "expires_in": ACCESS_SECONDS,
        }
        if refresh_token:
            answer["refresh_token"] = refresh_token
        if scopes:
            answer["scope"] = " ".join(scopes)
        return answer

    # -- POST /oauth/revoke (RFC 7009) ------------------------------------------------------------------
    async def revoke(self, request: Request, fields: dict[str, str]) -> None:
        """End the sign-in of the token presented, when it is the client's own; an unknown, expired or
        foreign token is not an error (RFC 7009 §2.2: the answer is the same 200)."""
        client = await self.authentication.client(request, fields)
        token = fields.get("token")
        if not token or len(token) > 8192:
            raise OAuthError("invalid_request", "token is required")
        hint = fields.get("token_type_hint")
        family = None
        if hint != "access_token" and token.count(".") == 1:
            family = await self._refresh_family(client, token)
        if family is None and token.count(".") == 2:
            claims = await asyncio.to_thread(verify, self.f.signer, token, self.f.resource, self.f.issuer)
            if claims and claims.get("client_id") == client.client_id and isinstance(claims.get("sid"), str):
                family = claims["sid"]
        if family is not None:
            await self.f.families.end(family)

    async def _refresh_family(self, client: Client, token: str) -> str | None:
        family = token.partition(".")[0]
        found = await self.f.store.get("family", family, self.f.clock())
        if found is None or found[0]["client_id"] != client.client_id:
            return None
        row, current = found
        presented = digest(token)
        return family if presented in (current, row.get("previous")) else None
