"""Users' tokens at other services (connections), kept per (principal, connection) in the facade's table,
sealed (`token_sealing`), and refreshed at the provider when they expire.

A row (kind `connection`, key the digest of principal and connection) holds the sealed access and refresh
tokens, when the access token expires, and when the row was written. It lives as long as its refresh
token may (`refresh_token_expires_in` when the provider says, else `KEEP_SECONDS`), or, without one, as
long as the access token. Nothing in it is readable without the sealing key, and a sealed value opens
only for the row it was sealed for, so one principal's tokens can never be served to another.

A refresh happens once at a time per row: the request that wins a short lock (a `count` row) refreshes
and writes; the others wait for its write (`WAIT_SECONDS` at most) and use the result. A provider that
answers `invalid_grant` (the user revoked the app) ends the row: the next call asks the user again.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
import urllib.request
from collections.abc import Callable
from typing import Any
from urllib.parse import urlencode

from ..polling import Backoff
from ..server.connections import Connection
from ..storage.facade import FacadeStore
from .hashing import digest
from .token_sealing import TokenSealing
from .upstream import UpstreamError, call

logger = logging.getLogger("lambda_mcp.auth")
KEEP_SECONDS = 90 * 86_400
EARLY_SECONDS = 60
"""An access token this close to its expiry (or half its lifetime, when that is shorter) is refreshed first."""
LOCK_SECONDS = 30
WAIT_SECONDS = 5.0


class ProviderError(Exception):
    """The provider refused or failed (logged; the tool sees a fixed message)."""

    def __init__(self, message: str, code: str | None = None) -> None:
        super().__init__(message)
        self.code = code


def token_request(connection: Connection, form: dict[str, str]) -> dict[str, Any]:
    """The provider's token endpoint's answer to `form` (blocking), the client authenticating with its
    secret in the form (`client_secret_post`, which GitHub and Google accept) or with PKCE alone."""
    body = {**form, "client_id": connection.client_id}
    try:
        secret = connection.secret()
    except Exception as exc:  # a denied or missing secret reference
        raise ProviderError(f"the {connection.name} client secret could not be read: {exc}") from exc
    if secret:
        body["client_secret"] = secret
    headers = {"Accept": "application/json", "Content-Type": "application/x-www-form-urlencoded"}
    request = urllib.request.Request(connection.token_url, data=urlencode(body).encode(), headers=headers)
    try:
        answer = call(request)
    except UpstreamError as exc:
        raise ProviderError(str(exc), exc.code) from None
    if isinstance(answer.get("error"), str):  # GitHub answers some refusals with 200
        raise ProviderError(f"{connection.token_url} refused: {answer['error']}", answer["error"])
    if not isinstance(answer.get("access_token"), str):
        raise ProviderError(f"{connection.token_url} answered no access_token")
    return answer


class ConnectionVault:
    def __init__(self, store: FacadeStore, sealing: TokenSealing, clock: Callable[[], float]) -> None:
        self.store = store
        self.sealing = sealing
        self.clock = clock

    @staticmethod
    def key(principal: str, name: str) -> str:
        return digest("connection", principal, name)

    async def save(self, principal: str, connection: Connection, tokens: dict[str, Any]) -> None:
        """Keep the provider's token response for `principal` (sealed)."""
        key, now = self.key(principal, connection.name), self.clock()
        given = tokens.get("expires_in")
        lifetime = float(given) if isinstance(given, int | float) and given > 0 else 3600.0
        expires = now + lifetime
        refresh = tokens.get("refresh_token") if isinstance(tokens.get("refresh_token"), str) else None
        refresh_life = tokens.get("refresh_token_expires_in")
        keep = float(refresh_life) if isinstance(refresh_life, int | float) and refresh_life > 0 else KEEP_SECONDS
        secret = json.dumps({"access_token": tokens["access_token"], "refresh_token": refresh})
        sealed = await asyncio.to_thread(self.sealing.seal, secret, key)
        row = {
            "sealed": sealed,
            "expires": expires,
            "refresh_at": expires - min(EARLY_SECONDS, lifetime / 2),  # a short-lived token is not refreshed at once
            "saved": now,
            "scope": str(tokens.get("scope") or ""),
        }
        await self.store.put("connection", key, row, now + keep if refresh else expires)

    async def connected(self, principal: str, connection: Connection) -> bool:
        """Whether the user has tokens kept for `connection` (no unsealing, no refresh)."""
        return await self.store.get("connection", self.key(principal, connection.name), self.clock()) is not None

    async def forget(self, principal: str, name: str) -> None:
        await self.store.delete("connection", self.key(principal, name))

    async def access_token(self, principal: str, connection: Connection) -> str | None:
        """The user's valid access token at `connection` (refreshed when due); None when there is none."""
        key = self.key(principal, connection.name)
        found = await self.store.get("connection", key, self.clock())
        if found is None:
            return None
        row = found[0]
        opened = await self._open(row, key)
        if opened is None:
            return None
        if float(row.get("refresh_at", row["expires"])) > self.clock():
            return str(opened["access_token"])
        if not opened.get("refresh_token"):
            await self.store.delete("connection", key)
            return None
        return await self._refresh(principal, connection, key, row, opened)

    async def _open(self, row: dict[str, Any], key: str) -> dict[str, Any] | None:
        text = await asyncio.to_thread(self.sealing.unseal, row.get("sealed"), key)
        if text is None:
            logger.warning("auth: a connection's tokens do not open with the current key; the user is asked again")
            return None
        opened: dict[str, Any] = json.loads(text)
        return opened

    async def _refresh(
        self, principal: str, connection: Connection, key: str, row: dict[str, Any], opened: dict[str, Any]
    ) -> str | None:
        now = self.clock()
        if not await self.store.count("connection-lock", key, 1, now + LOCK_SECONDS, now):
            return await self._wait_for(key, float(row["saved"]))
        try:
            form = {"grant_type": "refresh_token", "refresh_token": str(opened["refresh_token"])}
            try:
                tokens = await asyncio.to_thread(token_request, connection, form)
            except ProviderError as exc:
                if exc.code in ("invalid_grant", "bad_refresh_token", "unauthorized_client"):
                    logger.info("auth: %s refused a refresh: the user is asked to connect again", connection.name)
                    await self.store.delete("connection", key)
                    return None
                raise
            if not isinstance(tokens.get("refresh_token"), str):  # a provider that does not rotate keeps the old
                tokens = {**tokens, "refresh_token": opened["refresh_token"]}
            await self.save(principal, connection, tokens)
            return str(tokens["access_token"])
        finally:
            await self.store.delete("connection-lock", key)

    async def _wait_for(self, key: str, saved: float) -> str | None:
        """Another request is refreshing this row: its result, once written."""
        backoff = Backoff(time.time() + WAIT_SECONDS, first=0.1, limit=0.5)
        while await backoff.sleep():
            found = await self.store.get("connection", key, self.clock())
            if found is None:
                return None
            if float(found[0]["saved"]) > saved:
                opened = await self._open(found[0], key)
                return str(opened["access_token"]) if opened else None
        raise ProviderError("a refresh of this connection is taking too long; try again")
