"""The browser side of connections: `GET /oauth/connections/<name>/start` and `.../callback`, where a user
grants the app a token at another service (the provider of `app.connection(name)`).

The MCP spec requires the user who completes a URL elicitation to be the one who was asked. So:

1. **The link** (`start_url`) carries a sealed state (state key, `connection start`): the principal who
   was asked, the connection and an expiry (`START_SECONDS`), nothing readable; it works once.
2. **Who is at the browser** is proven by the facade's own sign-in: its `lmcp_consent` cookie (signed by
   the facade) naming that same user. Without it, or naming someone else, the browser signs in again at
   the upstream (`prompt=login`), through the facade's usual callback; if the one who signs in is not the
   one who was asked, nothing is stored and the page says why (another user's link: a phishing attempt).
3. **The provider's flow**: authorization code with PKCE S256 and a `state` naming a pending row bound to
   this browser (`lmcp_browser`), the user and the connection; its callback exchanges the code and keeps
   the tokens (`connection_vault`), then says "you can close this window". The tool's next run finds them;
   a 2025-11-25 client is told with `notifications/elicitation/complete` (the link carries its id).

Only people signed in through the facade can connect (`<facade issuer>#<subject>`): a machine client or
an enterprise user's token names no one this browser can prove to be.
"""

from __future__ import annotations

import asyncio
import json
import logging
import secrets
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from ..server.connections import Connection
from .authorize import BROWSER_COOKIE, PENDING_SECONDS, remembered_subject, with_query
from .connection_vault import ConnectionVault, ProviderError, token_request
from .hashing import digest, s256
from .pages import error_page, message_page
from .sealing import StateKeys, seal, unseal
from .upstream import UpstreamError

if TYPE_CHECKING:
    from .context import FacadeContext

logger = logging.getLogger("lambda_mcp.auth")
START_SECONDS = 600
_BOUND_TO = "connection start"


def person(issuer: str, principal: str | None) -> str | None:
    """The upstream subject of a person signed in through this facade, from their principal; None for any
    other caller (a machine client, an enterprise user, another issuer's)."""
    prefix = issuer + "#"
    if principal is None or not principal.startswith(prefix):
        return None
    return principal[len(prefix) :] or None


class ConnectionFlow:
    def __init__(
        self,
        facade: FacadeContext,
        connections: Mapping[str, Connection],
        vault: ConnectionVault,
        state_keys: Callable[[], Sequence[bytes]] | None,
    ) -> None:
        self.f = facade
        self.connections = connections
        self.vault = vault
        self.keys = StateKeys(state_keys, _BOUND_TO)
        self.completed: Callable[[str, str], Awaitable[None]] | None = None
        """Tell the user's 2025-11-25 session the elicitation (id) finished (`notifications/elicitation/
        complete`, through the change feed); set by the kit."""

    # -- the link a tool's elicitation names ---------------------------------------------------------------
    def start_url(self, principal: str, name: str, elicitation_id: str | None = None) -> str:
        """The link for `principal` to connect `name`; `elicitation_id` (2025-11-25): the elicitation whose
        completion the client is told of once the flow ends."""
        keys = self.keys.keys()
        if not keys:
            raise ProviderError("no state key to seal the connection link with (LAMBDA_MCP_STATE_KEY)")
        state = {"p": principal, "c": name, "x": self.f.clock() + START_SECONDS, "n": secrets.token_urlsafe(8)}
        if elicitation_id:
            state["e"] = elicitation_id
        sealed = seal(keys[0], json.dumps(state), _BOUND_TO)
        return f"{self.f.issuer}/oauth/connections/{name}/start?" + urlencode({"s": sealed})

    # -- GET /oauth/connections/<name>/start ---------------------------------------------------------------
    async def start(self, request: Request) -> Response:
        name = request.path_params["name"]
        connection = self.connections.get(name)
        sealed = request.query_params.get("s") or ""
        opened = unseal(self.keys.keys(), sealed, _BOUND_TO) if connection and len(sealed) < 4096 else None
        state = json.loads(opened) if opened else None
        now = self.f.clock()
        if connection is None or not state or state.get("c") != name or float(state.get("x", 0)) < now:
            return error_page("Link not valid", "this connection link is not valid or has expired: ask again", 400)
        if not await self.f.store.count("connection-start", digest(sealed), 1, float(state["x"]) + 60, now):
            return error_page("Link used", "this connection link was already used: ask again from your client", 400)
        principal, elicitation = str(state["p"]), state.get("e")
        if person(self.f.issuer, principal) is None:
            return error_page("Not available", "connections are for people signed in through this server", 400)
        if await remembered_subject(self.f, request) == person(self.f.issuer, principal):
            return await self._to_provider(request, principal, connection, elicitation=elicitation)
        return await self._sign_in_again(request, principal, name, elicitation)

    async def _sign_in_again(self, request: Request, principal: str, name: str, elicitation: str | None) -> Response:
        browser = request.cookies.get(BROWSER_COOKIE) or secrets.token_urlsafe(24)
        txn, verifier, nonce = secrets.token_urlsafe(24), secrets.token_urlsafe(48), secrets.token_urlsafe(16)
        pending = {
            "stage": "connection",
            "browser": digest(browser),
            "principal": principal,
            "connection": name,
            "verifier": verifier,
            "nonce": nonce,
            "elicitation": elicitation,
        }
        await self.f.store.put("pending", txn, pending, self.f.clock() + PENDING_SECONDS)
        url = await asyncio.to_thread(self.f.upstream.authorize_url, txn, s256(verifier), nonce)
        response = RedirectResponse(with_query(url, {"prompt": "login"}), 302)
        self._cookie(response, BROWSER_COOKIE, browser)
        return response

    async def signed_in(self, pending: dict[str, Any], params: Mapping[str, str]) -> Response:
        """The upstream's callback for a connection's sign-in (`authorize.AuthorizeFlow.callback` hands it
        over): the one who signed in must be the one who was asked."""
        if params.get("error") or not params.get("code"):
            return error_page("Not signed in", "the sign-in was cancelled: nothing was connected", 400)
        try:
            tokens = await asyncio.to_thread(self.f.upstream.exchange, params["code"], pending["verifier"])
            claims = await self.f.upstream.identity(tokens, pending["nonce"])
        except UpstreamError as exc:
            logger.error("auth: the upstream sign-in for a connection failed: %s", exc)
            return error_page("Sign-in failed", "the identity provider did not confirm the sign-in", 502)
        del tokens
        principal, connection = str(pending["principal"]), self.connections.get(str(pending["connection"]))
        if str(claims.get("sub")) != person(self.f.issuer, principal) or connection is None:
            logger.warning("auth: a connection link was opened by another user than the one asked; refused")
            return error_page(
                "Another user's link",
                "this link was started by another user: nothing was connected. If you did not ask for it,"
                " someone may be trying to connect your account to theirs; close this window.",
                403,
            )
        return await self._to_provider(None, principal, connection, pending["browser"], pending.get("elicitation"))

    async def _to_provider(
        self,
        request: Request | None,
        principal: str,
        connection: Connection,
        browser_digest: str | None = None,
        elicitation: str | None = None,
    ) -> Response:
        browser = None
        if browser_digest is None:
            assert request is not None
            browser = request.cookies.get(BROWSER_COOKIE) or secrets.token_urlsafe(24)
            browser_digest = digest(browser)
        txn, verifier = secrets.token_urlsafe(24), secrets.token_urlsafe(48)
        row = {
            "browser": browser_digest,
            "principal": principal,
            "connection": connection.name,
            "verifier": verifier,
            "elicitation": elicitation,
        }
        await self.f.store.put("connection-pending", txn, row, self.f.clock() + PENDING_SECONDS)
        query = {
            "response_type": "code",
            "client_id": connection.client_id,
            "redirect_uri": self.callback_url(connection.name),
            "state": txn,
            "code_challenge": s256(verifier),
            "code_challenge_method": "S256",
            **({"scope": " ".join(connection.scopes)} if connection.scopes else {}),
            **connection.authorize_params,
        }
        response = RedirectResponse(with_query(connection.authorize_url, query), 302)
        if browser is not None:
            self._cookie(response, BROWSER_COOKIE, browser)
        return response

    def callback_url(self, name: str) -> str:
        return f"{self.f.issuer}/oauth/connections/{name}/callback"

    # -- GET /oauth/connections/<name>/callback ------------------------------------------------------------
    async def callback(self, request: Request) -> Response:
        name, params = request.path_params["name"], request.query_params
        txn = params.get("state")
        row = await self.f.store.take("connection-pending", txn, self.f.clock()) if txn else None
        browser = request.cookies.get(BROWSER_COOKIE)
        connection = self.connections.get(name)
        if row is None or browser is None or row["browser"] != digest(browser) or row["connection"] != name:
            return error_page("Link expired", "this connection attempt expired or was used: ask again", 400)
        assert connection is not None
        if params.get("error") or not params.get("code"):
            return message_page(
                f"Not connected to {name}", "You declined: nothing was connected. You can close this window."
            )
        form = {"grant_type": "authorization_code", "code": params["code"], "code_verifier": row["verifier"]}
        form["redirect_uri"] = self.callback_url(name)
        try:
            tokens = await asyncio.to_thread(token_request, connection, form)
        except ProviderError as exc:
            logger.error("auth: the %s token exchange failed: %s", name, exc)
            return error_page("Not connected", f"{name} did not confirm the connection: try again", 502)
        await self.vault.save(str(row["principal"]), connection, tokens)
        logger.info("auth: a user connected %s", name)
        if isinstance(row.get("elicitation"), str) and self.completed is not None:
            await self.completed(row["elicitation"], str(row["principal"]))
        return message_page(f"Connected to {name}", "You can close this window and go back to your client.")

    def _cookie(self, response: Response, name: str, value: str) -> None:
        secure = self.f.issuer.startswith("https://")
        response.set_cookie(
            name,
            value,
            max_age=PENDING_SECONDS * 6,
            path=self.f.path("/"),
            secure=secure,
            httponly=True,
            samesite="lax",
        )
