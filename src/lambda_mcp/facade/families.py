"""Sign-ins as refresh-token families: one row per sign-in, its rotation, the upstream's say, and its end.

A refresh token is `<family>.<secret>`. The family's row (`family`, keyed by its id) holds the hash of
the one current token as its version, who signed in, the client, the scopes and copied claims, and the
upstream's refresh token sealed with the state key. Each refresh swaps the current token for a new one
with a conditional write, so of two requests presenting one token only one rotates it.

- **Leeway.** The row keeps the hash of the token just replaced and its successor, sealed under a key
  derived from the replaced token. For `LEEWAY_SECONDS`, presenting the replaced token again (a retry
  after a lost response, two refreshes at once) returns that same successor with a new access token,
  as long as the successor has not been used. Any other reuse revokes the family: the client and a
  thief both sign in again.
- **The upstream decides.** When the last upstream check is older than
  `LAMBDA_MCP_AUTH_UPSTREAM_CHECK_SECONDS`, the refresh that rotated the token also refreshes at the
  upstream. `invalid_grant` there (the user was disabled or signed out upstream), an identity that no
  longer meets `LAMBDA_MCP_AUTH_UPSTREAM_REQUIRE`, or no upstream refresh token to ask with, ends the
  family. An upstream that cannot be reached does not: the refresh goes through, and the next one asks
  again. What the upstream answered (a rotated refresh token) is written back with a few tries more
  than the client's own retries; if all fail, the refresh still goes through, and an upstream that
  refuses the token it replaced ends the family at the next check.
- **Ends.** A family ends `FAMILY_SECONDS` after the sign-in, or `LAMBDA_MCP_AUTH_IDLE_SECONDS` after
  its last refresh, on revocation (RFC 7009), on a replayed code, or when an operator signs its user
  out everywhere (a `signout` row newer than the sign-in).
"""

from __future__ import annotations

import asyncio
import logging
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from ..config import Settings
from ..storage.errors import StorageError
from ..storage.facade import FacadeStore
from .admission import admitted, copied
from .errors import OAuthError
from .hashing import digest
from .sealing import StateKeys, derived_key, seal, unseal
from .upstream import UpstreamError

logger = logging.getLogger("lambda_mcp.auth")
FAMILY_SECONDS = 30 * 86_400
LEEWAY_SECONDS = 30
KEEP_PAUSES = (0.2, 0.5, 1.0)
"""Seconds between the tries of keeping what an upstream check returned (each a fresh request)."""
BAD_GRANT = "the code or refresh token is invalid, expired, used, or was issued to another client"
_LEEWAY = "refresh leeway"


def _bad_grant() -> OAuthError:
    return OAuthError("invalid_grant", BAD_GRANT)


@dataclass(frozen=True)
class Grant:
    """What a token response is made of: who, for which client, the scopes and claims, and the refresh
    token (None: the client did not register for refresh tokens)."""

    family: str
    client_id: str
    subject: str
    scopes: list[str]
    claims: dict[str, Any]
    refresh_token: str | None


async def sign_out(store: FacadeStore, subject: str, now: float) -> None:
    """Sign `subject` out everywhere: every sign-in of theirs that started before `now` ends at its next
    refresh, and no consent they gave before `now` is remembered (`lambda-mcp signout`)."""
    await store.put("signout", digest(subject), {"at": now}, now + FAMILY_SECONDS)


class _Facade(Protocol):
    """What families need of the facade (`context.FacadeContext` has it all)."""

    settings: Settings
    store: FacadeStore
    state_keys: StateKeys
    upstream: Any
    clock: Callable[[], float]


class Families:
    def __init__(self, facade: _Facade) -> None:
        self.f = facade

    def _expires(self, row: dict[str, Any], now: float) -> float:
        return min(float(row["created"]) + FAMILY_SECONDS, now + self.f.settings.auth_idle_seconds)

    # -- sign-in ----------------------------------------------------------------------------------
    async def start(
        self,
        family: str,
        client_id: str,
        subject: str,
        scopes: list[str],
        signed_in: dict[str, Any],
        jkt: str | None = None,
    ) -> str:
        """Write a new family for a sign-in (`signed_in`: the pending row's upstream results); its first
        refresh token. `jkt`: the DPoP key its refresh tokens are bound to (a public client's)."""
        now = self.f.clock()
        row = {
            "jkt": jkt,
            "client_id": client_id,
            "subject": subject,
            "scopes": scopes,
            "claims": signed_in.get("claims") or {},
            "upstream": signed_in.get("upstream"),
            "created": now,
            "checked": now,
        }
        token = f"{family}.{secrets.token_urlsafe(32)}"
        await self.f.store.put("family", family, row, self._expires(row, now), digest(token))
        return token

    async def end(self, family: str) -> None:
        if family:
            await self.f.store.delete("family", family)

    # -- refresh ----------------------------------------------------------------------------------
    async def rotate(self, client_id: str, token: str, jkt: str | None = None) -> Grant:
        """The grant a refresh token is worth, its successor in place; `OAuthError(invalid_grant)`. A
        family bound to a DPoP key refreshes only with a proof by that key (`jkt`), checked before any write."""
        family, _, _ = token.partition(".")
        now = self.f.clock()
        found = await self.f.store.get("family", family, now)
        if found is None or found[0]["client_id"] != client_id:
            raise _bad_grant()
        row, current = found
        if row.get("jkt") and row["jkt"] != jkt:
            raise OAuthError("invalid_dpop_proof", "this refresh token is DPoP-bound: send a proof by its key")
        if await self.signed_out(row["subject"], float(row["created"])):
            await self.end(family)
            raise _bad_grant()
        presented = digest(token)
        if presented != current:
            return await self._repeat(family, row, current, token)
        successor = f"{family}.{secrets.token_urlsafe(32)}"
        rotated = {
            **row,
            "previous": presented,
            "previous_until": now + LEEWAY_SECONDS,
            "successor": seal(derived_key(token, _LEEWAY), successor, family),
        }
        if not await self.f.store.swap(
            "family", family, current, rotated, self._expires(row, now), digest(successor), now
        ):
            again = await self.f.store.get("family", family, now)  # another request rotated it first
            if again is None:
                raise _bad_grant()
            return await self._repeat(family, again[0], again[1], token)
        if self._check_due(row, now):
            rotated = await self._check_upstream(family, rotated, digest(successor))
        return Grant(family, client_id, row["subject"], row["scopes"], rotated.get("claims") or {}, successor)

    async def _repeat(self, family: str, row: dict[str, Any], current: str, token: str) -> Grant:
        """A token that is not the current one: the replaced one within the leeway gets the same successor
        (while unused), anything else revokes the family."""
        now = self.f.clock()
        if row.get("previous") == digest(token) and now < float(row.get("previous_until", 0)):
            successor = unseal([derived_key(token, _LEEWAY)], row.get("successor"), family)
            if successor is not None and digest(successor) == current:
                return Grant(
                    family, row["client_id"], row["subject"], row["scopes"], row.get("claims") or {}, successor
                )
        logger.info("auth: a refresh token was used again; its sign-in (family %s…) is revoked", family[:6])
        await self.end(family)
        raise _bad_grant()

    def _check_due(self, row: dict[str, Any], now: float) -> bool:
        return now - float(row.get("checked", 0)) >= self.f.settings.auth_upstream_check_seconds

    async def _check_upstream(self, family: str, row: dict[str, Any], version: str) -> dict[str, Any]:
        """Ask the upstream whether the user may still sign in; end the family (`invalid_grant`) if not. The
        row with what the upstream answered (written back when it can be; a lost write costs one more check)."""
        upstream = unseal(self.f.state_keys.keys(), row.get("upstream"), family)
        if upstream is None:
            logger.info("auth: sign-in %s… holds no upstream refresh token to check with; it ends", family[:6])
            await self.end(family)
            raise _bad_grant()
        try:
            tokens = await asyncio.to_thread(self.f.upstream.refresh, upstream)
            claims = await self.f.upstream.identity(tokens, None, row["subject"])
        except UpstreamError as exc:
            if exc.code == "invalid_grant":
                logger.info("auth: the upstream no longer signs in the user of sign-in %s…; it ends", family[:6])
                await self.end(family)
                raise _bad_grant() from None
            logger.warning("auth: the upstream check of sign-in %s… failed; retried next refresh: %s", family[:6], exc)
            return row
        if not admitted(claims, self.f.settings.auth_upstream_require):
            logger.info("auth: the user of sign-in %s… no longer meets AUTH_UPSTREAM_REQUIRE; it ends", family[:6])
            await self.end(family)
            raise _bad_grant()
        now = self.f.clock()
        refreshed = tokens.get("refresh_token")
        checked = {
            **row,
            "checked": now,
            "claims": copied(claims, self.f.settings.auth_upstream_claims),
            "upstream": self.seal_upstream(family, refreshed) if isinstance(refreshed, str) else row.get("upstream"),
        }
        for pause in (*KEEP_PAUSES, None):  # an upstream that rotates its tokens gave this one only: keep it
            try:
                await self.f.store.swap("family", family, version, checked, self._expires(row, now), version, now)
                break
            except StorageError as exc:
                if pause is None:  # the refresh goes through; the next check asks with the token kept before
                    logger.error(
                        "auth: sign-in %s…: the upstream's new refresh token could not be kept: %s", family[:6], exc
                    )
                    break
                await asyncio.sleep(pause)
        return checked

    def seal_upstream(self, family: str, refresh_token: str | None) -> str | None:
        """The upstream's refresh token sealed for `family`'s row (None: no token, or no state key to seal with)."""
        keys = self.f.state_keys.keys()
        if not refresh_token or not keys:
            return None
        return seal(keys[0], refresh_token, family)

    # -- sign out everywhere ----------------------------------------------------------------------
    async def signed_out(self, subject: str, since: float) -> bool:
        """Whether `subject` was signed out everywhere after `since`."""
        found = await self.f.store.get("signout", digest(subject), self.f.clock())
        return found is not None and float(found[0].get("at", 0)) >= since
