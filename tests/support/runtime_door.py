"""Serve the real Lambda HTTP handler on 127.0.0.1 as API Gateway's HTTP API would, with nothing but the
standard library and `lambda_mcp`: run by a venv that holds only a deployment's dependencies.

`python runtime_door.py PORT`: each HTTP request becomes an HTTP API (payload 2.0) event for
`lambda_mcp.entrypoints.http.handler`, through the kit's own HTTP API emulation (local/gateways.py: the
event, the cookies and base64 body of the response, the challenge template.yaml maps onto 401 and 403).
Requests are handled one at a time on one thread with its own event loop, as in one execution
environment. `LAMBDA_MCP_*` variables configure the kit as in Lambda.
"""

from __future__ import annotations

import asyncio
import sys
from concurrent.futures import ThreadPoolExecutor
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from lambda_mcp.local.context import LambdaContext
from lambda_mcp.local.gateways import Call, Gateway

_environment = ThreadPoolExecutor(1, initializer=lambda: asyncio.set_event_loop(asyncio.new_event_loop()))
"""The execution environment: one thread, with the event loop Mangum runs each invocation on."""


def _import_handler() -> Any:
    from lambda_mcp.entrypoints.http import handler  # the cold start: a bad setting fails here

    return handler


def main(port: int) -> None:
    handler = _environment.submit(_import_handler).result()
    gateway = Gateway("http", lambda event: _environment.submit(handler, event, LambdaContext()).result())
    domain = f"127.0.0.1:{port}"

    class Door(BaseHTTPRequestHandler):
        def _relay(self) -> None:
            body = self.rfile.read(int(self.headers.get("content-length") or 0))
            headers: dict[str, str] = {}
            for name, value in self.headers.items():  # repeated headers joined, as API Gateway does
                key = name.lower()
                headers[key] = f"{headers[key]},{value}" if key in headers else value
            reply = gateway.handle(Call(self.command, self.path, headers, body, domain))
            self.send_response(reply.status)
            for name, value in reply.headers:
                if name.lower() not in ("content-length", "transfer-encoding", "connection"):
                    self.send_header(name, value)
            self.send_header("content-length", str(len(reply.body)))
            self.end_headers()
            self.wfile.write(reply.body)

        do_GET = do_POST = do_DELETE = _relay

    server = ThreadingHTTPServer(("127.0.0.1", port), Door)
    server.daemon_threads = True
    print(f"runtime door on http://{domain}/mcp", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main(int(sys.argv[1]))
