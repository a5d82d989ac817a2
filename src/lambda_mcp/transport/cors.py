"""CORS for browser clients on the origins `LAMBDA_MCP_ALLOWED_ORIGINS` lists (ASGI middleware).

A preflight `OPTIONS` from an allowed origin is answered here: 204 with the methods MCP uses and the
request headers it asked for that MCP defines. Every other response to an allowed origin carries
`Access-Control-Allow-Origin` and exposes the headers a client must read (`Mcp-Session-Id`,
`WWW-Authenticate`, ...). A request from an origin not listed passes through untouched: the endpoint's
Origin check refuses it (403), and without CORS headers the browser does too.
"""

from __future__ import annotations

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from .security import origin_allowed

METHODS = "GET, POST, DELETE, OPTIONS"
REQUEST_HEADERS = frozenset(
    {
        "accept",
        "authorization",
        "content-type",
        "last-event-id",
        "mcp-method",
        "mcp-name",
        "mcp-protocol-version",
        "mcp-session-id",
    }
)
"""Request headers a browser client may send (besides `Mcp-Param-*`, the tools' own routing headers)."""
EXPOSED = "Mcp-Session-Id, Mcp-Protocol-Version, WWW-Authenticate, Retry-After"
MAX_AGE_SECONDS = "600"


class Cors:
    def __init__(self, app: ASGIApp, origins: tuple[str, ...]) -> None:
        self.app = app
        self.origins = origins

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        origin = _header(scope, b"origin") if scope["type"] == "http" else None
        if origin is None or not self.origins or not origin_allowed(origin, self.origins):
            await self.app(scope, receive, send)
            return
        if scope["method"] == "OPTIONS" and _header(scope, b"access-control-request-method") is not None:
            await self._preflight(origin, _header(scope, b"access-control-request-headers") or "", send)
            return

        async def with_cors(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = [(k, v) for k, v in message.get("headers", []) if not k.lower().startswith(b"access-control")]
                headers += [
                    (b"access-control-allow-origin", origin.encode("latin-1")),
                    (b"access-control-expose-headers", EXPOSED.encode()),
                    (b"vary", b"Origin"),
                ]
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, with_cors)

    async def _preflight(self, origin: str, requested: str, send: Send) -> None:
        asked = [name.strip().lower() for name in requested.split(",") if name.strip()]
        allowed = [name for name in asked if name in REQUEST_HEADERS or name.startswith("mcp-param-")]
        headers = [
            (b"access-control-allow-origin", origin.encode("latin-1")),
            (b"access-control-allow-methods", METHODS.encode()),
            (b"access-control-allow-headers", ", ".join(allowed).encode("latin-1")),
            (b"access-control-max-age", MAX_AGE_SECONDS.encode()),
            (b"vary", b"Origin"),
            (b"content-length", b"0"),
        ]
        await send({"type": "http.response.start", "status": 204, "headers": headers})
        await send({"type": "http.response.body", "body": b""})


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope.get("headers", []):
        if key.lower() == name:
            text: str = value.decode("latin-1")
            return text
    return None
