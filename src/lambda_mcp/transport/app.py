"""`create_app(...)`: the ASGI application serving `/mcp`, its metadata documents and a health check
(`Kit.asgi()` builds it from a kit's parts).

Requests to `/mcp` go straight to the endpoint (with CORS when browser origins are allowed): every
request pays for it, so it skips Starlette's router and middleware stack (about 7 µs of a ~50 µs warm
request). Everything else is a small Starlette application.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from ..auth.metadata import AUTHORIZATION_SERVER_METADATA, WELL_KNOWN
from .cors import Cors

if TYPE_CHECKING:
    from starlette.routing import BaseRoute

    from ..server.lifespan import Lifespan
    from .access import Access


async def _health(request: Request) -> JSONResponse:
    return JSONResponse({"status": "ok"})


class HttpApp:
    """`/mcp` to the endpoint; any other path (and lifespan events) to the app `others()` builds once."""

    def __init__(self, mcp: ASGIApp, others: Callable[[], ASGIApp], path: str, lifespan: Lifespan) -> None:
        self.mcp = mcp
        self.lifespan = lifespan
        self._build_others = others
        self._others: ASGIApp | None = None
        self.path = path

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            path: str = scope["path"]
            root: str = scope.get("root_path", "")
            if (path[len(root) :] if root and path.startswith(root) else path) == self.path:
                await self.mcp(scope, receive, send)
                return
        elif scope["type"] == "lifespan":
            await self._serve_lifespan(receive, send)
            return
        if self._others is None:
            self._others = self._build_others()
        await self._others(scope, receive, send)

    async def _serve_lifespan(self, receive: Receive, send: Send) -> None:
        """A server's start-up enters the app's lifespan, its shutdown leaves it (`lambda-mcp dev`)."""
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                try:
                    await self.lifespan.start()
                except Exception as exc:
                    await send({"type": "lifespan.startup.failed", "message": f"the app's lifespan failed: {exc!r}"})
                    return
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await self.lifespan.stop()
                await send({"type": "lifespan.shutdown.complete"})
                return


def create_app(
    endpoint: ASGIApp,
    access: Access,
    lifespan: Lifespan,
    origins: tuple[str, ...],
    path: str = "/mcp",
    routes: Callable[[], Sequence[BaseRoute]] | None = None,
) -> HttpApp:
    """`/mcp` to `endpoint` (every method: the endpoint answers 405 itself), the protected resource
    metadata at both well-known forms, the authorization server metadata for 2025-03-26 clients, and
    `/healthz`; CORS for the allowed browser `origins`. `routes` (the authorization facade's, built
    on first use) come first, so the facade's own metadata replaces the copy of an issuer's."""

    def others() -> ASGIApp:
        from starlette.applications import Starlette
        from starlette.routing import Route

        app = Starlette(
            routes=[
                *(routes() if routes is not None else ()),
                Route(WELL_KNOWN + path, access.protected_resource, methods=["GET"]),
                Route(WELL_KNOWN, access.protected_resource, methods=["GET"]),
                Route(AUTHORIZATION_SERVER_METADATA, access.authorization_server, methods=["GET"]),
                Route("/healthz", _health, methods=["GET"]),
            ]
        )
        return Cors(app, origins)

    return HttpApp(Cors(endpoint, origins) if origins else endpoint, others, path, lifespan)
