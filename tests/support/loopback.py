"""A threaded HTTP server on 127.0.0.1 for the tests' stand-ins (an issuer, a fault proxy, a SigV4 door):
every request of the listed methods goes to one function, which answers it on the handler."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from .processes import free_port

Handle = Callable[[BaseHTTPRequestHandler], None]


def respond(
    handler: BaseHTTPRequestHandler,
    status: int,
    body: bytes,
    content_type: str | None = "application/json",
    headers: Iterable[tuple[str, str]] = (),
) -> None:
    """Answer the request on `handler`: the status, the content type (None: none), `headers`, and `body`
    with its length."""
    handler.send_response(status)
    if content_type is not None:
        handler.send_header("content-type", content_type)
    for name, value in headers:
        handler.send_header(name, value)
    handler.send_header("content-length", str(len(body)))
    handler.end_headers()
    handler.wfile.write(body)


class LoopbackServer:
    """Serves `handle` on a free loopback port from a daemon thread until `stop()`; `protocol` is the
    handler's HTTP version (HTTP/1.0: one request per connection)."""

    def __init__(self, handle: Handle, methods: Iterable[str] = ("GET",), *, protocol: str = "HTTP/1.0") -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"

        def serve(handler: BaseHTTPRequestHandler) -> None:  # a function: the class binds it to each handler
            handle(handler)

        def quiet(handler: BaseHTTPRequestHandler, format: str, *args: Any) -> None:
            return

        members: dict[str, Any] = {f"do_{method}": serve for method in methods}
        members |= {"protocol_version": protocol, "log_message": quiet}
        self._server = ThreadingHTTPServer(
            ("127.0.0.1", self.port), type("Handler", (BaseHTTPRequestHandler,), members)
        )
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, daemon=True).start()

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
