"""What `ctx.connection`, `ctx.disconnect` and `ctx.upstream_token` do in `proxy` mode (`server.credentials`).

- **`connection(name)`**: the user's token from the vault (refreshed when due). Without one, the user is
  asked to connect: on 2026-07-28 and inside tasks a URL elicitation (`ctx.elicit_url`) naming the
  facade's start link; when the answer is `accept` and the tokens are there, the call goes on; when they
  are not there yet, it asks again (as the 2026 spec says a server does when the out-of-band flow has not
  finished), up to `MAX_ASKS` times. On 2025-11-25 outside a task the call ends with -32042
  (`URLElicitationRequired`) naming the link, and the client retries once the user is done. A declined or
  cancelled elicitation raises `ConnectionDeclined`.
- **`upstream_token()`**: a fresh access token from the upstream the caller signed in with, refreshed with
  the upstream refresh token the sign-in's row keeps sealed, one refresh at a time per sign-in (a lock row;
  the others wait for its result); the new access token is kept sealed in the row until `EARLY_SECONDS`
  (or half its life, when that is shorter) before it expires.
- **`exchange_token(audience, scopes)`**: that upstream token exchanged at the upstream for one meant for
  another API (RFC 8693; Entra ID's on-behalf-of), kept sealed per (user, audience, scopes) until it nears
  expiry; an upstream that offers neither is a `CredentialsUnavailable` saying so.

Tokens never reach the client, a log line, or an error: failures say what failed, not with what.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..polling import Backoff
from ..protocol import revisions
from ..server.connections import Connection
from ..server.credentials import ConnectionDeclined, CredentialsUnavailable
from .connection_flow import ConnectionFlow, person
from .connection_vault import EARLY_SECONDS, LOCK_SECONDS, WAIT_SECONDS, ConnectionVault, ProviderError
from .hashing import digest
from .sealing import derived_key, seal, unseal
from .upstream import UpstreamError

if TYPE_CHECKING:
    from ..server.context import Context
    from .context import FacadeContext

logger = logging.getLogger("lambda_mcp.auth")
MAX_ASKS = 5
_ACCESS = "upstream access token"
_EXCHANGED = "exchanged token"


class FacadeCredentials:
    def __init__(
        self, facade: FacadeContext, connections: Mapping[str, Connection], vault: ConnectionVault, flow: ConnectionFlow
    ) -> None:
        self.f = facade
        self.connections = connections
        self.vault = vault
        self.flow = flow

    def _person(self, ctx: Context) -> str:
        principal = ctx.principal
        if person(self.f.issuer, principal) is None:
            raise CredentialsUnavailable(
                "this caller is not a person signed in through this server (a machine client or an enterprise"
                " token): it has no tokens at other services"
            )
        return str(principal)

    def _connection(self, name: str) -> Connection:
        found = self.connections.get(name)
        if found is None:
            raise CredentialsUnavailable(f"no connection named {name!r}: declare it with app.connection({name!r}, ...)")
        return found

    # -- connections -----------------------------------------------------------------------------------
    async def connection(self, ctx: Context, name: str) -> str:
        connection, principal = self._connection(name), self._person(ctx)
        token = await self._stored(principal, connection)
        if token is not None:
            return token
        message = f"Connect your {name} account so this tool can act for you"
        legacy = revisions.has_elicitation_ids(ctx.protocol_version)
        if legacy and ctx.task_id is None:
            required = ctx.elicitation_id(f"connect:{name}")
            url = self.flow.start_url(principal, name, required)
            raise ctx.url_elicitation_required(message, url, elicitation_id=required)
        for ask in range(1, MAX_ASKS + 1):
            key = f"connect:{name}:{ask}"
            elicitation = ctx.elicitation_id(key) if legacy else None
            url = self.flow.start_url(principal, name, elicitation)
            answer = await ctx.elicit_url(message, url, key=key, elicitation_id=elicitation)
            if answer.get("action") != "accept":
                raise ConnectionDeclined(name)
            token = await self._stored(principal, connection)
            if token is not None:
                return token
        raise CredentialsUnavailable(f"{name} was not connected after {MAX_ASKS} tries")

    async def _stored(self, principal: str, connection: Connection) -> str | None:
        try:
            return await self.vault.access_token(principal, connection)
        except ProviderError as exc:
            logger.error("auth: the %s connection could not be refreshed: %s", connection.name, exc)
            raise CredentialsUnavailable(
                f"{connection.name} could not be reached to refresh the token; try again"
            ) from None

    async def disconnect(self, ctx: Context, name: str) -> None:
        self._connection(name)
        await self.vault.forget(self._person(ctx), name)

    # -- token exchange --------------------------------------------------------------------------------
    async def exchange_token(self, ctx: Context, audience: str, scopes: Sequence[str]) -> str:
        principal = self._person(ctx)
        wanted = sorted(dict.fromkeys(scopes))
        key, now = digest("exchanged", principal, audience, *wanted), self.f.clock()
        keys = [derived_key(key_version, _EXCHANGED) for key_version in self.f.state_keys.keys()]  # noqa: SIM118
        found = await self.f.store.get("exchanged", key, now)
        if found is not None and float(found[0].get("expires", 0)) - EARLY_SECONDS > now:
            held = unseal(keys, found[0].get("sealed"), key)
            if held is not None:
                return held
        subject = await self.upstream_token(ctx)
        try:
            tokens = await asyncio.to_thread(self.f.upstream.exchange_token, subject, audience, wanted)
        except UpstreamError as exc:
            logger.warning("auth: a token exchange for %s failed: %s", audience, exc)
            if exc.code == "unsupported_grant_type":
                raise CredentialsUnavailable(
                    "the identity provider does not support token exchange (RFC 8693, or Entra ID on-behalf-of)"
                ) from None
            raise CredentialsUnavailable(f"the identity provider refused a token for {audience}") from None
        access = tokens.get("access_token")
        if not isinstance(access, str) or not keys:
            raise CredentialsUnavailable("the identity provider answered no access token")
        lifetime = tokens.get("expires_in")
        expires = now + (float(lifetime) if isinstance(lifetime, int | float) and lifetime > 0 else 300)
        row = {"sealed": seal(keys[0], access, key), "expires": expires}
        await self.f.store.put("exchanged", key, row, expires)
        return access

    # -- the upstream's token --------------------------------------------------------------------------
    async def upstream_token(self, ctx: Context) -> str:
        self._person(ctx)
        family = ctx.claims.get("sid")
        if not isinstance(family, str):
            raise CredentialsUnavailable("this token names no sign-in (only a person's sign-in has an upstream)")
        found = await self.f.store.get("family", family, self.f.clock())
        if found is None:
            raise CredentialsUnavailable("this sign-in has ended: sign in again")
        row, version = found
        cached = self._cached(row, family)
        if cached is not None:
            return cached
        now = self.f.clock()
        if not await self.f.store.count("upstream-lock", family, 1, now + LOCK_SECONDS, now):
            return await self._wait_for(family)
        try:
            return await self._refresh(family, row, version)
        finally:
            await self.f.store.delete("upstream-lock", family)

    def _cached(self, row: dict[str, Any], family: str) -> str | None:
        held = row.get("upstream_access")
        if not isinstance(held, dict) or float(held.get("refresh_at", 0)) <= self.f.clock():
            return None
        keys = [derived_key(key, _ACCESS) for key in self.f.state_keys.keys()]  # noqa: SIM118 (not a dict)
        return unseal(keys, held.get("sealed"), family)

    async def _refresh(self, family: str, row: dict[str, Any], version: str) -> str:
        keys = self.f.state_keys.keys()
        refresh = unseal(keys, row.get("upstream"), family)
        if refresh is None:
            raise CredentialsUnavailable("the identity provider gave this sign-in no refresh token")
        try:
            tokens = await asyncio.to_thread(self.f.upstream.refresh, refresh)
        except UpstreamError as exc:
            logger.warning("auth: refreshing at the upstream for upstream_token() failed: %s", exc)
            raise CredentialsUnavailable("the identity provider did not refresh the token; sign in again") from None
        access, now = tokens.get("access_token"), self.f.clock()
        if not isinstance(access, str):
            raise CredentialsUnavailable("the identity provider answered no access token")
        given = tokens.get("expires_in")
        lifetime = float(given) if isinstance(given, int | float) and given > 0 else 300.0
        refresh_at = now + lifetime - min(EARLY_SECONDS, lifetime / 2)
        rotated = tokens.get("refresh_token")
        updated = {
            **row,
            "upstream": self.f.families.seal_upstream(family, rotated) if isinstance(rotated, str) else row["upstream"],
            "upstream_access": {
                "sealed": seal(derived_key(keys[0], _ACCESS), access, family),
                "refresh_at": refresh_at,
            },
        }
        expires_at = min(float(row["created"]) + 30 * 86_400, now + self.f.settings.auth_idle_seconds)
        if not await self.f.store.swap("family", family, version, updated, expires_at, version, now):
            logger.info("auth: a sign-in rotated while its upstream token was refreshed; the new token is not kept")
        return access

    async def _wait_for(self, family: str) -> str:
        backoff = Backoff(time.time() + WAIT_SECONDS, first=0.1, limit=0.5)
        while await backoff.sleep():
            found = await self.f.store.get("family", family, self.f.clock())
            cached = self._cached(found[0], family) if found else None
            if cached is not None:
                return cached
        raise CredentialsUnavailable("another request is refreshing the upstream token; try again")
