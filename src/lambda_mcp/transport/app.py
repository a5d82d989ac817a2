"""`create_app(kit)`: the Starlette application serving `/mcp`, its metadata documents and a health check."""

from __future__ import annotations

from typing import TYPE_CHECKING

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from ..auth.metadata import AUTHORIZATION_SERVER_METADATA, WELL_KNOWN
from .cors import Cors

if TYPE_CHECKING:
    from ..kit import Kit


async def _health(request: Request) -> JSONResponse:
    return JSONResponse({"status": "ok"})


def create_app(kit: Kit, path: str = "/mcp") -> Starlette:
    """`/mcp` (every method: the endpoint answers 405 itself), the protected resource metadata at both
    well-known forms, the authorization server metadata for 2025-03-26 clients, and `/healthz`; CORS for
    the allowed browser origins."""
    access = kit.access
    return Starlette(
        middleware=[Middleware(Cors, origins=kit.endpoint.front.origins)],
        routes=[
            Route(path, kit.endpoint),
            Route(WELL_KNOWN + path, access.protected_resource, methods=["GET"]),
            Route(WELL_KNOWN, access.protected_resource, methods=["GET"]),
            Route(AUTHORIZATION_SERVER_METADATA, access.authorization_server, methods=["GET"]),
            Route("/healthz", _health, methods=["GET"]),
        ],
    )
