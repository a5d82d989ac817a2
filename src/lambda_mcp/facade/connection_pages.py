"""`GET /oauth/connections`: where a person signed in through the facade sees the services they connected
(`app.connection`) and disconnects them (`POST /oauth/connections/<name>/disconnect`).

Who is at the browser comes from the facade's signed sign-in cookie (`authorize.remembered_subject`); a
browser without it is asked to sign in from an MCP client first. A disconnect form carries a token derived
from the browser's own `lmcp_browser` cookie (which another site can neither read nor set), so a page
elsewhere cannot make the browser disconnect anything (and the cookies are SameSite=Lax).
"""

from __future__ import annotations

import hmac
import secrets
from collections.abc import Mapping
from html import escape
from typing import TYPE_CHECKING

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from ..server.connections import Connection
from .authorize import BROWSER_COOKIE, PENDING_SECONDS, remembered_subject
from .connection_vault import ConnectionVault
from .errors import OAuthError
from .forms import form_fields
from .hashing import digest
from .pages import error_page, message_page

if TYPE_CHECKING:
    from .context import FacadeContext


class ConnectionPages:
    def __init__(self, facade: FacadeContext, connections: Mapping[str, Connection], vault: ConnectionVault) -> None:
        self.f = facade
        self.connections = connections
        self.vault = vault

    async def _principal(self, request: Request) -> str | None:
        subject = await remembered_subject(self.f, request)
        return f"{self.f.issuer}#{subject}" if subject else None

    async def list(self, request: Request) -> Response:
        principal = await self._principal(request)
        if principal is None:
            text = "Sign in to this server from your MCP client first; then this page shows your connections."
            return message_page("Your connections", text)
        browser = request.cookies.get(BROWSER_COOKIE) or secrets.token_urlsafe(24)
        token = digest(browser, "connections page")
        rows = []
        for name in sorted(self.connections):
            connected = await self.vault.connected(principal, self.connections[name])
            action = self.f.path(f"/oauth/connections/{name}/disconnect")
            button = (
                f'<form method="post" action="{escape(action)}"><input type="hidden" name="token" value="{token}">'
                f"<button>Disconnect</button></form>"
                if connected
                else ""
            )
            rows.append(f"<li><b>{escape(name)}</b>: {'connected' if connected else 'not connected'} {button}</li>")
        listing = f"<ul>{''.join(rows)}</ul>" if rows else "<p>This server connects no other services.</p>"
        response = message_page("Your connections", "The services tools may use as you:", listing)
        secure = self.f.issuer.startswith("https://")
        response.set_cookie(
            BROWSER_COOKIE, browser, max_age=PENDING_SECONDS * 6, path=self.f.path("/"), secure=secure,
            httponly=True, samesite="lax",
        )  # fmt: skip
        return response

    async def disconnect(self, request: Request) -> Response:
        name = request.path_params["name"]
        principal = await self._principal(request)
        browser = request.cookies.get(BROWSER_COOKIE)
        body = await request.body()
        try:
            fields = form_fields(body[:4096], request.headers.get("content-type"))
        except OAuthError:
            fields = {}
        expected = digest(browser, "connections page") if browser else ""
        if principal is None or not browser or not hmac.compare_digest(fields.get("token", ""), expected):
            return error_page("Not disconnected", "open your connections page again and use its button", 403)
        if name in self.connections:
            await self.vault.forget(principal, name)
        return RedirectResponse(self.f.path("/oauth/connections"), 303)
