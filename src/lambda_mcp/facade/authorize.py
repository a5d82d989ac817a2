"""The browser side of the facade: `/oauth/authorize`, the consent decision, and the upstream's callback.

1. `/authorize` checks the client, its exact redirect URI, PKCE S256, `resource` and the scopes. Any
   failure is the facade's error page: nothing goes to the client's redirect URI before the user acted
   (anyone can register a redirect URI, so that would make the MCP origin an open redirector). It
   stores a pending authorization (ten minutes, at most `pending:ip` per source address and window)
   bound to this browser (the `lmcp_browser` cookie, SameSite=Lax) and shows the consent page, unless
   the browser's `lmcp_consent` cookie (signed by the facade) names a user who already approved this
   client for this exact `https` redirect URI. A loopback or private-use redirect URI always shows the
   page: any program on the computer can listen on a loopback port, any app can claim a scheme.
2. Approve (with its box ticked) sends the browser to the upstream with the facade's own client, a
   `state` naming the pending authorization, its own PKCE pair and a nonce; Deny sends `access_denied`
   to the client.
3. The callback (single use: the pending row is taken) exchanges the upstream's code, validates the
   user's identity, checks `LAMBDA_MCP_AUTH_UPSTREAM_REQUIRE`, records the consent and sends the client
   a facade code (single use, 60 s) that carries the sign-in: the user, the copied claims and the
   upstream's refresh token, sealed. If the remembered user turns out not to be the one who signed in,
   and this one never approved the client, the consent page is shown again before any code is issued.
"""

from __future__ import annotations

import asyncio
import logging
import re
import secrets
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode, urlsplit, urlunsplit

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from .admission import admitted, copied
from .errors import OAuthError
from .hashing import digest, s256
from .limits import source_address
from .pages import CONFIRM, consent_page, error_page
from .redirects import destination
from .signing import mint, verify
from .upstream import UpstreamError

if TYPE_CHECKING:
    from .clients import Client
    from .context import FacadeContext

logger = logging.getLogger("lambda_mcp.auth")
PENDING_SECONDS = 600
CODE_SECONDS = 60
MAX_STATE_CHARS = 1024
CONSENT_SECONDS = 90 * 86_400
BROWSER_COOKIE = "lmcp_browser"
CONSENT_COOKIE = "lmcp_consent"
_BROWSER_ID = re.compile(r"[A-Za-z0-9_-]{32}")


def with_query(uri: str, params: dict[str, str]) -> str:
    parts = urlsplit(uri)
    query = "&".join(filter(None, [parts.query, urlencode(params)]))
    return urlunsplit((parts.scheme, parts.netloc, parts.path, query, ""))


def _expired() -> Response:
    return error_page("This sign-in has expired", "start again from the application")


def _refused(description: str) -> Response:
    return error_page("This sign-in request is not valid", description)


def _redirect(url: str) -> Response:
    return RedirectResponse(url, 302, headers={"Cache-Control": "no-store"})


async def remembered_subject(facade: FacadeContext, request: Request) -> str | None:
    """The user this browser signed in as through the facade (its signed `lmcp_consent` cookie), if any."""
    cookie = request.cookies.get(CONSENT_COOKIE)
    if not cookie or len(cookie) > 4096:
        return None
    claims = await asyncio.to_thread(verify, facade.signer, cookie, facade.issuer + "/consent", facade.issuer)
    sub = claims.get("sub") if claims else None
    return sub if isinstance(sub, str) else None


class AuthorizeFlow:
    def __init__(self, facade: FacadeContext) -> None:
        self.f = facade
        self.connection_sign_in: Callable[[dict[str, Any], Mapping[str, str]], Awaitable[Response]] | None = None
        """The upstream's callback for a connection link's sign-in (`connection_flow.ConnectionFlow.signed_in`)."""

    # -- /oauth/authorize ---------------------------------------------------------------------------
    async def authorize(self, request: Request) -> Response:
        params = request.query_params
        source = source_address(request)
        try:
            client = await self.f.clients.find(params.get("client_id"), source)
        except OAuthError as exc:
            if exc.status == 429:
                return error_page("Too many sign-ins", exc.description, 429, exc.retry_after)
            return error_page("Unknown application", exc.description)
        redirect_uri = client.redirect_for(params.get("redirect_uri"))
        if redirect_uri is None:
            return error_page("Wrong redirect address", "the redirect_uri is not one this application registered")
        state = params.get("state")
        if state is not None and len(state) > MAX_STATE_CHARS:
            return _refused("state is limited to 1024 characters")
        if params.get("response_type") != "code":
            return _refused("response_type must be code")
        challenge = params.get("code_challenge")
        if not challenge:
            return _refused("PKCE is required: send code_challenge with code_challenge_method=S256")
        if params.get("code_challenge_method") != "S256" or not 43 <= len(challenge) <= 128:
            return _refused("only PKCE code_challenge_method S256 is supported")
        if params.get("resource") != self.f.resource:
            return _refused("resource must be this MCP server's URL")
        try:
            scopes = self.f.grantable(params.get("scope"))
        except OAuthError as exc:
            return _refused(exc.description)
        browser = request.cookies.get(BROWSER_COOKIE) or ""
        if not _BROWSER_ID.fullmatch(browser):  # only an id of the facade's own is renewed, never a client's text
            browser = secrets.token_urlsafe(24)
        txn = secrets.token_urlsafe(24)
        pending: dict[str, Any] = {
            "client_id": client.client_id,
            "redirect_uri": redirect_uri,
            "state": state,
            "challenge": challenge,
            "scopes": scopes,
            "browser": digest(browser),
            "stage": "consent",
        }
        try:
            await self.f.limits.spend("pending:ip", source, "sign-ins from this address")
        except OAuthError as exc:
            return error_page("Too many sign-ins", exc.description, 429, exc.retry_after)
        remembered = await self._remembered(request) if destination(redirect_uri).kind == "web" else None
        if remembered is not None and await self._consented(remembered, client.client_id, redirect_uri, scopes):
            pending["stage"], pending["subject"] = "remembered", remembered
            response = await self._to_upstream(txn, pending)
        else:
            await self.f.store.put("pending", txn, pending, self.f.clock() + PENDING_SECONDS)
            response = self._consent_page(client, redirect_uri, scopes, txn)
        self._set_cookie(response, BROWSER_COOKIE, browser, PENDING_SECONDS * 6)
        return response

    def _consent_page(self, client: Client, redirect_uri: str, scopes: list[str], txn: str) -> Response:
        return consent_page(
            self.f.path("/oauth/consent"),
            self.f.server_name,
            client.name,
            client.client_id,
            destination(redirect_uri),
            scopes,
            txn,
        )

    async def _remembered(self, request: Request) -> str | None:
        return await remembered_subject(self.f, request)

    async def _consented(self, subject: str, client_id: str, redirect_uri: str, scopes: list[str]) -> bool:
        """Whether `subject` approved `client_id` for `redirect_uri` and `scopes`, since they were last signed
        out everywhere. Only `https` redirect URIs are remembered."""
        if destination(redirect_uri).kind != "web":
            return False
        found = await self.f.store.get("consent", digest(subject, client_id, redirect_uri), self.f.clock())
        if found is None or not set(scopes) <= set(found[0].get("scopes", [])):
            return False
        return not await self.f.families.signed_out(subject, float(found[0].get("created", 0)))

    async def _to_upstream(self, txn: str, pending: dict[str, Any]) -> Response:
        """Send the browser to the upstream's login. If the upstream cannot be reached, the client hears of
        it only when the user acted here (an approval) or approved this exact redirect before."""
        verifier, nonce = secrets.token_urlsafe(48), secrets.token_urlsafe(16)
        pending = {**pending, "verifier": verifier, "nonce": nonce}
        try:
            url = await asyncio.to_thread(self.f.upstream.authorize_url, txn, s256(verifier), nonce)
        except UpstreamError as exc:
            logger.error("auth: the upstream identity provider is unavailable: %s", exc)
            return self._back(pending, "temporarily_unavailable", "the identity provider could not be reached")
        await self.f.store.put("pending", txn, pending, self.f.clock() + PENDING_SECONDS)
        return _redirect(url)

    # -- POST /oauth/consent ------------------------------------------------------------------------
    async def consent(self, request: Request, form: dict[str, str]) -> Response:
        txn, decision = form.get("txn"), form.get("decision")
        if txn is None or decision not in ("approve", "deny"):
            return error_page("Bad request", "the consent form is incomplete")
        if decision == "approve" and form.get(CONFIRM) != "yes":
            return error_page("Not approved", "tick the box to say you started this sign-in, then approve")
        found = await self.f.store.get("pending", txn, self.f.clock())
        browser = request.cookies.get(BROWSER_COOKIE)
        if found is None or browser is None or found[0]["browser"] != digest(browser):
            return _expired()
        pending = found[0]
        if pending["stage"] not in ("consent", "confirm"):
            return _expired()
        if decision == "deny":
            await self.f.store.delete("pending", txn)
            return self._deny(pending)
        if pending["stage"] == "confirm":
            if await self.f.store.take("pending", txn, self.f.clock()) is None:
                return _expired()
            return await self._issue_code(pending, pending["subject"], pending.get("signed_in") or {})
        return await self._to_upstream(txn, {**pending, "stage": "approved"})

    def _deny(self, pending: dict[str, Any], description: str = "the user denied access") -> Response:
        return self._back(pending, "access_denied", description)

    def _back(self, pending: dict[str, Any], error: str, description: str) -> Response:
        """Send the client its (checked) redirect URI with an RFC 6749 error: only once the user acted on the
        consent page, or for a redirect URI this user approved before."""
        answer = {"error": error, "error_description": description, "iss": self.f.issuer}
        if pending.get("state"):
            answer["state"] = pending["state"]
        return _redirect(with_query(pending["redirect_uri"], answer))

    # -- GET /oauth/callback ------------------------------------------------------------------------
    async def callback(self, request: Request) -> Response:
        params = request.query_params
        txn = params.get("state")
        pending = await self.f.store.take("pending", txn, self.f.clock()) if txn else None
        browser = request.cookies.get(BROWSER_COOKIE)
        if pending is None or browser is None or pending["browser"] != digest(browser):
            return _expired()
        if pending["stage"] == "connection" and self.connection_sign_in is not None:
            return await self.connection_sign_in(pending, params)
        if pending["stage"] not in ("approved", "remembered"):
            return _expired()
        if params.get("error") or not params.get("code"):
            logger.info("auth: the upstream refused the sign-in: %s", params.get("error", "no code"))
            return self._deny(pending)
        family = secrets.token_urlsafe(18)
        try:
            tokens = await asyncio.to_thread(self.f.upstream.exchange, params["code"], pending["verifier"])
            claims = await self.f.upstream.identity(tokens, pending["nonce"])
        except UpstreamError as exc:
            logger.error("auth: the upstream sign-in failed: %s", exc)
            return self._back(pending, "temporarily_unavailable", "the identity provider did not confirm the sign-in")
        subject = str(claims["sub"])
        if not admitted(claims, self.f.settings.auth_upstream_require):
            logger.info("auth: a user who does not meet AUTH_UPSTREAM_REQUIRE was refused")
            if pending["stage"] == "remembered":
                return error_page("Access denied", "your account may not use this server", 403)
            return self._deny(pending, "this account may not use this server")
        refresh = tokens.get("refresh_token")
        signed_in = {
            "family": family,
            "claims": copied(claims, self.f.settings.auth_upstream_claims),
            "upstream": self.f.families.seal_upstream(family, refresh if isinstance(refresh, str) else None),
        }
        del tokens  # the upstream's access and ID tokens go no further; its refresh token only sealed
        if pending["stage"] == "remembered" and not await self._consented(
            subject, pending["client_id"], pending["redirect_uri"], pending["scopes"]
        ):
            txn = secrets.token_urlsafe(24)
            confirm = {**pending, "stage": "confirm", "subject": subject, "signed_in": signed_in}
            await self.f.store.put("pending", txn, confirm, self.f.clock() + PENDING_SECONDS)
            client = await self.f.clients.find(pending["client_id"])
            return self._consent_page(client, pending["redirect_uri"], pending["scopes"], txn)
        return await self._issue_code(pending, subject, signed_in)

    async def _issue_code(self, pending: dict[str, Any], subject: str, signed_in: dict[str, Any]) -> Response:
        now = self.f.clock()
        client_id, redirect_uri = pending["client_id"], pending["redirect_uri"]
        if destination(redirect_uri).kind == "web":  # only these are ever remembered
            consent = {"client_id": client_id, "scopes": pending["scopes"], "created": now}
            await self.f.store.put("consent", digest(subject, client_id, redirect_uri), consent, now + CONSENT_SECONDS)
        code = secrets.token_urlsafe(32)
        row = {key: pending[key] for key in ("client_id", "redirect_uri", "challenge", "scopes")}
        await self.f.store.put("code", digest(code), {**row, "subject": subject, **signed_in}, now + CODE_SECONDS)
        answer = {"code": code, "iss": self.f.issuer}
        if pending.get("state"):
            answer["state"] = pending["state"]
        response = _redirect(with_query(redirect_uri, answer))
        claims = {
            "iss": self.f.issuer,
            "aud": self.f.issuer + "/consent",
            "sub": subject,
            "iat": int(now),
            "exp": int(now + CONSENT_SECONDS),
        }
        cookie = await asyncio.to_thread(mint, self.f.signer, claims, "JWT")
        self._set_cookie(response, CONSENT_COOKIE, cookie, CONSENT_SECONDS)
        return response

    def _set_cookie(self, response: Response, name: str, value: str, max_age: int) -> None:
        secure = urlsplit(self.f.issuer).scheme == "https"
        response.set_cookie(
            name, value, max_age=max_age, path=self.f.path("/"), secure=secure, httponly=True, samesite="lax"
        )
