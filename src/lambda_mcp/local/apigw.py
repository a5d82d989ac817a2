"""API Gateway emulation for `lambda-mcp dev --lambda`: HTTP request -> Lambda event -> the real handler.

Every request goes through `lambda_mcp.entrypoints.http.handler` (Mangum, buffered), one at a time
like a single Lambda execution environment, with a fake context honouring remaining time, behind the
front door chosen with `--api` (HTTP API, REST API or Function URL: local/gateways.py). Tasks go
through the task queue to `lambda_mcp.entrypoints.worker.handler` (local/poller.py).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import importlib
import os
import secrets
import signal
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from .context import LambdaContext
from .dev import cannot_listen
from .gateways import REST_STAGE, ApiType, Call, Caller, Gateway


class _Invoker:
    """Runs a handler on one thread with its own event loop (Mangum needs one, and Lambda runs one at a time)."""

    def __init__(self, module: str = "lambda_mcp.entrypoints.http") -> None:
        self._module = module
        self._pool = concurrent.futures.ThreadPoolExecutor(max_workers=1, initializer=self._init_loop)
        self._handler: Callable[[dict[str, Any], Any], dict[str, Any]] = self._pool.submit(self._import).result()

    @staticmethod
    def _init_loop() -> None:
        asyncio.set_event_loop(asyncio.new_event_loop())

    def _import(self) -> Callable[[dict[str, Any], Any], dict[str, Any]]:
        handler: Callable[[dict[str, Any], Any], dict[str, Any]] = importlib.import_module(self._module).handler
        return handler

    def invoke(self, event: dict[str, Any]) -> dict[str, Any]:
        return self._pool.submit(self._handler, event, LambdaContext()).result()


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128  # the default 5 resets connections when a few clients connect at once


def _make_handler(gateway: Gateway, domain: str) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True

        def _relay(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            body = self.rfile.read(length) if length else b""
            headers: dict[str, str] = {}
            for key, value in self.headers.items():
                key = key.lower()
                headers[key] = f"{headers[key]},{value}" if key in headers else value
            # the TCP peer, as the front door's sourceIp: what the facade counts its per-address limits by
            peer = self.client_address[0]
            reply = gateway.handle(Call(self.command, self.path, headers, body, domain, source_ip=peer))
            self.send_response(reply.status)
            for key, value in reply.headers:
                if key.lower() not in ("content-length", "transfer-encoding", "connection"):
                    self.send_header(key, value)
            self.send_header("content-length", str(len(reply.body)))
            self.end_headers()
            self.wfile.write(reply.body)

        do_GET = do_POST = do_DELETE = do_PUT = do_PATCH = do_OPTIONS = _relay

        def log_message(self, format: str, *args: Any) -> None:
            return

    return Handler


def listen(gateway: Gateway, host: str, port: int) -> ThreadingHTTPServer:
    """The HTTP side of `dev --lambda`, bound to (host, port): each request, from its TCP peer, to `gateway`."""
    return _Server((host, port), _make_handler(gateway, f"{host}:{port}"))


def serve(target: str, host: str, port: int, api: ApiType = "http", caller: Caller | None = None) -> None:
    os.environ["LAMBDA_MCP_APP"] = target
    os.environ.setdefault("LAMBDA_MCP_STATE_KEY", secrets.token_urlsafe(32))
    # `lambda-mcp dev` is open unless told otherwise; an emulated authorizer's caller means auth `gateway`
    os.environ.setdefault("LAMBDA_MCP_AUTH", "gateway" if caller is not None else "none")
    path = f"/{REST_STAGE}/mcp" if api == "rest" else "/mcp"
    if api == "rest":  # the authorizer checks tokens for this audience, as for the API's own URL in AWS
        os.environ.setdefault("LAMBDA_MCP_RESOURCE_URL", f"http://{host}:{port}{path}")
    from .poller import prepare_queues, start_local_worker

    prepare_queues()  # before the kit is built: it reads the queue URL
    invoker = _Invoker()
    authorize = None
    if api == "rest" and os.environ["LAMBDA_MCP_AUTH"] in ("jwt", "proxy"):  # template.yaml's authorizer in front
        authorize = _Invoker("lambda_mcp.entrypoints.authorizer").invoke
    worker = start_local_worker()  # after the HTTP handler: both share its kit
    gateway = Gateway(api, invoker.invoke, authorize, caller)
    try:
        server = listen(gateway, host, port)
    except OSError as exc:
        worker.stop()
        raise cannot_listen(exc, host, port) from exc
    signal.signal(signal.SIGTERM, _interrupt)  # stop like Ctrl-C, so callers' cleanup runs
    state = os.environ.get("LAMBDA_MCP_TABLE_NAME")
    front = {"http": "HTTP API v2", "rest": "REST API v1", "url": "Function URL"}[api]
    print(
        f"lambda-mcp dev --lambda: http://{host}:{port}{path} -> {front} event -> Lambda handler (buffered), "
        + (f"state in DynamoDB table {state}" if state else "in-memory state")
        + f", auth {os.environ['LAMBDA_MCP_AUTH']}; tasks: {worker.queue_url} -> worker handler",
        flush=True,
    )
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
        worker.stop()


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt
