"""`create_app(kit)`: the Starlette application serving `/mcp` (and a health check)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

if TYPE_CHECKING:
    from ..kit import Kit


async def _health(request: Request) -> JSONResponse:
    return JSONResponse({"status": "ok"})


def create_app(kit: Kit, path: str = "/mcp") -> Starlette:
    return Starlette(
        routes=[
            Route(path, kit.endpoint, methods=["GET", "POST", "DELETE"]),
            Route("/healthz", _health, methods=["GET"]),
        ]
    )
