"""The browser side of the facade: `/oauth/authorize`, the consent decision, and the upstream's callback.

1. `/authorize` checks the client and its exact redirect URI (a failure is an error page: never a
   redirect to a URI that is not the client's), then PKCE S256, `resource` and the scopes (failures
   go back to the client as `error=`). It stores a pending authorization (ten minutes) bound to this
   browser (the `lmcp_browser` cookie, SameSite=Lax) and shows the consent page, unless the browser's
   `lmcp_consent` cookie (signed by the facade) names a user who already approved this client.
2. Approve sends the browser to the upstream with the facade's own client, a `state` naming the
   pending authorization, its own PKCE pair and a nonce; Deny sends `access_denied` to the client.
3. The callback (single use: the pending row is taken) exchanges the upstream's code, learns the user,
   records the consent and sends the client a facade code (single use, 60 s). If the remembered user
   turns out not to be the one who signed in, and this one never approved the client, the consent
   page is shown again before any code is issued.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode, urlsplit, urlunsplit

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from .errors import OAuthError
from .hashing import digest, s256
from .pages import consent_page, error_page
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


def with_query(uri: str, params: dict[str, str]) -> str:
    parts = urlsplit(uri)
    query = "&".join(filter(None, [parts.query, urlencode(params)]))
    return urlunsplit((parts.scheme, parts.netloc, parts.path, query, ""))


def _expired() -> Response:
    return error_page("This sign-in has expired", "start again from the application")


def _redirect(url: str) -> Response:
    return RedirectResponse(url, 302, headers={"Cache-Control": "no-store"})


class AuthorizeFlow:
    def __init__(self, facade: FacadeContext) -> None:
        self.f = facade

    # -- /oauth/authorize ---------------------------------------------------------------------------
    async def authorize(self, request: Request) -> Response:
        params = request.query_params
        try:
            client = await self.f.clients.find(params.get("client_id"))
        except OAuthError as exc:
            return error_page("Unknown application", exc.description)
        redirect_uri = client.redirect_for(params.get("redirect_uri"))
        if redirect_uri is None:
            return error_page("Wrong redirect address", "the redirect_uri is not one this application registered")
        state = params.get("state")

        def back(error: str, description: str) -> Response:
            return self._back({"redirect_uri": redirect_uri, "state": state}, error, description)

        if state is not None and len(state) > MAX_STATE_CHARS:
            state = None
            return back("invalid_request", "state is limited to 1024 characters")
        if params.get("response_type") != "code":
            return back("unsupported_response_type", "response_type must be code")
        challenge = params.get("code_challenge")
        if not challenge:
            return back("invalid_request", "PKCE is required: send code_challenge with code_challenge_method=S256")
        if params.get("code_challenge_method") != "S256" or not 43 <= len(challenge) <= 128:
            return back("invalid_request", "only PKCE code_challenge_method S256 is supported")
        if params.get("resource") != self.f.resource:
            return back("invalid_target", "resource must be this MCP server's URL")
        try:
            scopes = self.f.grantable(params.get("scope"))
        except OAuthError as exc:
            return back(exc.error, exc.description)
        browser = request.cookies.get(BROWSER_COOKIE) or secrets.token_urlsafe(24)
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
        remembered = await self._remembered(request)
        if remembered is not None and await self._consented(remembered, client.client_id, scopes):
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
            client.display_name,
            client.client_id,
            redirect_uri,
            scopes,
            txn,
        )

    async def _remembered(self, request: Request) -> str | None:
        cookie = request.cookies.get(CONSENT_COOKIE)
        if not cookie or len(cookie) > 4096:
            return None
        claims = await asyncio.to_thread(verify, self.f.signer, cookie, self.f.issuer + "/consent", self.f.issuer)
        sub = claims.get("sub") if claims else None
        return sub if isinstance(sub, str) else None

    async def _consented(self, subject: str, client_id: str, scopes: list[str]) -> bool:
        found = await self.f.store.get("consent", digest(subject, client_id), self.f.clock())
        return found is not None and set(scopes) <= set(found[0].get("scopes", []))

    async def _to_upstream(self, txn: str, pending: dict[str, Any]) -> Response:
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
    async def consent(self, request: Request) -> Response:
        form = await request.form()
        txn, decision = form.get("txn"), form.get("decision")
        if not isinstance(txn, str) or decision not in ("approve", "deny"):
            return error_page("Bad request", "the consent form is incomplete")
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
            return await self._issue_code(pending, pending["subject"])
        return await self._to_upstream(txn, {**pending, "stage": "approved"})

    def _deny(self, pending: dict[str, Any]) -> Response:
        return self._back(pending, "access_denied", "the user denied access")

    def _back(self, pending: dict[str, Any], error: str, description: str) -> Response:
        """Send the client its (checked) redirect URI with an RFC 6749 error."""
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
        if pending["stage"] not in ("approved", "remembered"):
            return _expired()
        if params.get("error") or not params.get("code"):
            logger.info("auth: the upstream refused the sign-in: %s", params.get("error", "no code"))
            return self._deny(pending)
        try:
            tokens = await asyncio.to_thread(self.f.upstream.exchange, params["code"], pending["verifier"])
            subject = await self.f.upstream.subject(tokens, pending["nonce"])
        except UpstreamError as exc:
            logger.error("auth: the upstream sign-in failed: %s", exc)
            return self._back(pending, "temporarily_unavailable", "the identity provider did not confirm the sign-in")
        del tokens  # the upstream's tokens go no further
        if pending["stage"] == "remembered" and not await self._consented(
            subject, pending["client_id"], pending["scopes"]
        ):
            txn = secrets.token_urlsafe(24)
            await self.f.store.put(
                "pending", txn, {**pending, "stage": "confirm", "subject": subject}, self.f.clock() + PENDING_SECONDS
            )
            client = await self.f.clients.find(pending["client_id"])
            return self._consent_page(client, pending["redirect_uri"], pending["scopes"], txn)
        return await self._issue_code(pending, subject)

    async def _issue_code(self, pending: dict[str, Any], subject: str) -> Response:
        now = self.f.clock()
        consent = {"client_id": pending["client_id"], "scopes": pending["scopes"]}
        await self.f.store.put("consent", digest(subject, pending["client_id"]), consent, now + CONSENT_SECONDS)
        code = secrets.token_urlsafe(32)
        row = {key: pending[key] for key in ("client_id", "redirect_uri", "challenge", "scopes")}
        await self.f.store.put("code", digest(code), {**row, "subject": subject}, now + CODE_SECONDS)
        answer = {"code": code, "iss": self.f.issuer}
        if pending.get("state"):
            answer["state"] = pending["state"]
        response = _redirect(with_query(pending["redirect_uri"], answer))
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
