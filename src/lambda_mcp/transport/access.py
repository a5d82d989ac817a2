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
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from starlette.requests import Request
from starlette.responses import Response

from ..auth.guard import Denied, Guard, guard_for, log_denial
from ..auth.identity import Identity
from ..auth.metadata import CHALLENGE_COPY, WELL_KNOWN, challenge, protected_resource_metadata
from ..config import LOOPBACK_NAMES, Settings
from ..protocol import jsonrpc
from ..protocol.errors import INVALID_REQUEST
from ..server.app import MCPApp
from .replies import json_reply

logger = logging.getLogger("lambda_mcp.auth")


@dataclass(frozen=True)
class Location:
    resource: str
    """The canonical URL of the MCP endpoint (the RFC 8707 resource, the default token audience)."""
    metadata: str
    """Where this deployment serves the protected resource metadata for it."""


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
        self.app = app
        self.settings = settings
        self.path = path
        self._server_metadata: dict[str, Any] | None = None

    @property
    def guard(self) -> Guard:
        """The auth mode's guard, built on first use (the task worker, which serves no HTTP, never builds
        one; the HTTP entrypoint builds it at start-up, so a bad setting fails there)."""
        if self._guard is None:
            self._guard = guard_for(self.settings)
        return self._guard

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
            return await guard.authenticate(request.headers, request.scope.get("aws.event"), audience)
        except Denied as denied:
            log_denial(denied, {"method": request.method, "path": request.url.path})
            return self.refusal(denied, self.locate(request), lambda_event="aws.event" in request.scope)

    def forbidden(self, request: Request, needed: frozenset[str], rid: Any = None) -> Response:
        """403 `insufficient_scope` for a request naming a tool, resource or prompt the token may not use."""
        denied = Denied(403, "the token lacks a scope this operation needs", "insufficient_scope", needed)
        log_denial(denied, {"method": request.method, "path": request.url.path})
        return self.refusal(denied, self.locate(request), rid, lambda_event="aws.event" in request.scope)

    def refusal(self, denied: Denied, location: Location, rid: Any = None, *, lambda_event: bool = False) -> Response:
        headers: dict[str, str] = {}
        if self.issuer is not None:
            wanted = denied.scopes if denied.status == 403 else frozenset(self.settings.auth_scopes)
            headers["WWW-Authenticate"] = challenge(
                location.metadata, error=denied.error, description=denied.description, scopes=wanted
            )
            if lambda_event:  # behind API Gateway: the copy its response mapping restores the header from
                headers[CHALLENGE_COPY] = headers["WWW-Authenticate"]
        if denied.status == 503:
            headers["Retry-After"] = "5"
        reason = {401: "Unauthorized", 403: "Forbidden", 503: "Service Unavailable"}.get(denied.status, "Refused")
        error = {"code": INVALID_REQUEST, "message": f"{reason}: {denied.description}"}
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
        origin: a copy of the issuer's (fetched once per execution environment)."""
        issuer = self.issuer
        if issuer is None:
            return _not_found("this server does not use OAuth (no authorization server is configured)")
        if self._server_metadata is None:
            from ..auth.fetch import FetchError, issuer_metadata

            try:
                self._server_metadata = await asyncio.to_thread(issuer_metadata, issuer)
            except FetchError as exc:
                logger.error("auth: cannot fetch the authorization server's metadata: %s", exc)
                body = {"error": "temporarily_unavailable", "error_description": "the issuer's metadata is unavailable"}
                return json_reply(body, 503, {"Retry-After": "5"})
        return json_reply(self._server_metadata, headers={"Cache-Control": "max-age=300"})


def _root(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


def _not_found(description: str) -> Response:
    return json_reply({"error": "not_found", "error_description": description}, 404)
