"""The HTTP side of authorization: the server's canonical URLs, authenticating a request (401/403/503
with a `WWW-Authenticate` challenge), and the well-known metadata documents.

The canonical resource URL is `LAMBDA_MCP_RESOURCE_URL`, else an `http(s)` `LAMBDA_MCP_AUTH_AUDIENCE`,
else the URL the request arrived at (the stage prefix of a REST API included). The metadata URL in
challenges is always one this deployment routes: `<base>/.well-known/oauth-protected-resource<mcp path>`,
where `<base>` is everything before the MCP path.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from starlette.requests import Request
from starlette.responses import Response

from ..auth.guard import Denied, Guard, guard_for, issuer_for, log_denial
from ..auth.identity import Identity
from ..auth.metadata import CHALLENGE_COPY, WELL_KNOWN, challenge, dpop_challenge, protected_resource_metadata
from ..config import LOOPBACK_NAMES, Settings
from ..protocol import jsonrpc
from ..protocol.errors import INVALID_REQUEST
from ..protocol.values import Value, set_field
from ..server.app import MCPApp
from .replies import json_reply

if TYPE_CHECKING:
    from ..auth.issuer import Issuer

logger = logging.getLogger("lambda_mcp.auth")


class Location(Value):
    """Where this deployment is: its resource URL and where its protected resource metadata is."""

    __slots__ = ("resource", "metadata")
    resource: str
    """The canonical URL of the MCP endpoint (the RFC 8707 resource, the default token audience)."""
    metadata: str
    """Where this deployment serves the protected resource metadata for it."""

    def __init__(self, resource: str, metadata: str) -> None:
        set_field(self, "resource", resource)
        set_field(self, "metadata", metadata)


def _external_path(request: Request) -> str:
    """The path the client used: API Gateway REST events keep the stage prefix in `requestContext.path`."""
    event = request.scope.get("aws.event")
    context = event.get("requestContext") if isinstance(event, dict) else None
    rest = isinstance(event, dict) and "httpMethod" in event  # payload 1.0 (REST)
    if rest and isinstance(context, dict) and isinstance(context.get("path"), str):
        return str(context["path"])
    return request.url.path


def _origin(request: Request) -> str:
    host = request.headers.get("host", "")
    if "aws.event" not in request.scope:
        return f"{request.url.scheme}://{host}"
    hostname = urlsplit(f"//{host}").hostname or ""
    return f"{'http' if hostname in LOOPBACK_NAMES else 'https'}://{host}"


class Access:
    """Authenticates requests for the endpoint and serves the metadata routes; one per kit."""

    def __init__(self, app: MCPApp, settings: Settings, path: str = "/mcp") -> None:
        self._guard: Guard | None = None
        self._issuer: Issuer | None = None
        self.app = app
        self.settings = settings
        self.path = path

    @property
    def guard(self) -> Guard:
        """The auth mode's guard, built on first use (the task worker, which serves no HTTP, never builds
        one; the HTTP entrypoint builds it at start-up, so a bad setting fails there)."""
        if self._guard is None:
            self._guard = guard_for(self.settings, self.issuer_documents)
        return self._guard

    @guard.setter
    def guard(self, guard: Guard) -> None:
        """Authenticate with `guard` instead (the test client's fixed caller)."""
        self._guard = guard

    @property
    def issuer_documents(self) -> Issuer | None:
        """The configured authorization server's metadata and keys (one per kit, shared with the guard)."""
        if self._issuer is None:
            self._issuer = issuer_for(self.settings)
        return self._issuer

    @property
    def issuer(self) -> str | None:
        return self.settings.auth_issuer if self.settings.auth != "none" else None

    def locate(self, request: Request) -> Location:
        configured = self.settings.resource_url
        audience = self.settings.auth_audience
        if configured is None and audience is not None and urlsplit(audience).scheme in ("http", "https"):
            configured = audience
        if configured is not None:
            resource = configured
            base = configured[: -len(self.path)] if configured.endswith(self.path) else _root(configured)
        else:
            external, route = _external_path(request), request.url.path
            prefix = external[: -len(route)] if external.endswith(route) else ""
            base = _origin(request) + prefix
            resource = base + self.path
        return Location(resource, base + WELL_KNOWN + self.path)

    # -- the endpoint's gate --------------------------------------------------------------
    async def authenticate(self, request: Request) -> Identity | None | Response:
        """The caller, or the refusal to send (401/403/503 with its challenge). The endpoint's URL is worked
        out only when a token's audience defaults to it, or for a refusal's challenge."""
        guard = self.guard
        if guard.mode == "none":
            return None
        audience = self.settings.auth_audience or (self.locate(request).resource if guard.mode == "jwt" else "")
        try:
            return await guard.authenticate(request.headers, request.scope.get("aws.event"), audience, request.method)
        except Denied as denied:
            return self.refuse(request, denied)

    def forbidden(self, request: Request, needed: frozenset[str], rid: Any = None) -> Response:
        """403 `insufficient_scope` for a request naming a tool, resource or prompt the token may not use."""
        denied = Denied(403, "the token lacks a scope this operation needs", "insufficient_scope", needed)
        return self.refuse(request, denied, rid)

    def refuse(self, request: Request, denied: Denied, rid: Any = None) -> Response:
        """A refusal, logged, with the challenge for this endpoint."""
        log_denial(denied, {"method": request.method, "path": request.url.path})
        return self.refusal(denied, self.locate(request), rid, lambda_event="aws.event" in request.scope)

    def refusal(self, denied: Denied, location: Location, rid: Any = None, *, lambda_event: bool = False) -> Response:
        """The refusal's response. A 403 challenge names every scope the client's next token needs: the
        operation's and the ones every request needs. The challenge is also in the error's `data`
        (`wwwAuthenticate`): behind a REST API or a Function URL, which rename the header, it is the only
        copy that reaches the client under a name it can read."""
        headers: dict[str, str] = {}
        error: dict[str, Any] = {"code": INVALID_REQUEST, "message": f"{_REASONS.get(denied.status, 'Refused')}: "}
        error["message"] += denied.description
        if self.issuer is not None:
            base = frozenset(self.settings.auth_scopes)
            wanted = denied.scopes | base if denied.status == 403 else base
            make = dpop_challenge if denied.scheme == "DPoP" else challenge
            headers["WWW-Authenticate"] = make(
                location.metadata, error=denied.error, description=denied.description, scopes=wanted
            )
            if denied.nonce is not None:
                headers["DPoP-Nonce"] = denied.nonce
            if lambda_event:  # behind API Gateway: the copy its response mapping restores the header from
                headers[CHALLENGE_COPY] = headers["WWW-Authenticate"]
            if denied.status in (401, 403):
                error["data"] = {"wwwAuthenticate": headers["WWW-Authenticate"]}
        if denied.status == 503:
            headers["Retry-After"] = str(denied.retry_after or 5)
        return json_reply(jsonrpc.error_message(rid, error), denied.status, headers)

    # -- well-known documents ---------------------------------------------------------------
    async def protected_resource(self, request: Request) -> Response:
        """RFC 9728 metadata (at the path form and the root form of the well-known URI); 404 without OAuth."""
        if self.issuer is None:
            return _not_found("this server does not use OAuth (no authorization server is configured)")
        scopes = {*self.settings.auth_scopes, *self.app.scopes_supported()}
        document = protected_resource_metadata(self.locate(request).resource, self.issuer, scopes, self.app.name)
        return json_reply(document, headers={"Cache-Control": "max-age=300"})

    async def authorization_server(self, request: Request) -> Response:
        """For 2025-03-26 clients, which look for the authorization server's metadata on the MCP server's own
        origin: a copy of the issuer's (fetched once per execution environment; a failure is remembered
        for a few seconds, so a down issuer costs each request nothing)."""
        documents = self.issuer_documents if self.issuer is not None else None
        if documents is None:
            return _not_found("this server does not use OAuth (no authorization server is configured)")
        from ..auth.issuer import IssuerUnavailable

        try:
            metadata = await asyncio.to_thread(documents.metadata)
        except IssuerUnavailable as exc:
            logger.error("auth: cannot fetch the authorization server's metadata: %s", exc)
            body = {"error": "temporarily_unavailable", "error_description": "the issuer's metadata is unavailable"}
            return json_reply(body, 503, {"Retry-After": str(exc.retry_after)})
        return json_reply(metadata, headers={"Cache-Control": "max-age=300"})


_REASONS = {401: "Unauthorized", 403: "Forbidden", 503: "Service Unavailable"}


def _root(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


def _not_found(description: str) -> Response:
    return json_reply({"error": "not_found", "error_description": description}, 404)
