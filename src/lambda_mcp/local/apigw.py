"""API Gateway emulation for `lambda-mcp dev --lambda`: HTTP request -> Lambda event -> the real handler.

Every request goes through `lambda_mcp.entrypoints.http.handler` (Mangum, buffered), one at a time
like a single Lambda execution environment, with a fake context honouring remaining time, behind the
front door chosen with `--api` (HTTP API, REST API or Function URL: local/gateways.py). Tasks go
through the task queue to `lambda_mcp.entrypoints.worker.handler` (local/poller.py).

Each request is one readable line on stderr, as under `lambda-mcp dev` (local/requestlog.py), or with
`--json-logs` the handler's JSON line as CloudWatch gets it. The development sign-in (local/idp.py), when
it is the facade's upstream, is served by this server itself, beside the front door, never through it.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import importlib
import os
import secrets
import signal
import socket
import sys
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl, urlsplit

from .context import LambdaContext
from .dev import listen as bind
from .gateways import REST_STAGE, ApiType, Call, Caller, Gateway, Reply
from .requestlog import HandlerLog, log_request, request_line

if TYPE_CHECKING:
    from .idp import DevIdentityProvider


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


class RequestLog:
    """The readable line of each request (`log`), its MCP method and tool from the handler's own request
    line (`HandlerLog`), which the invocation made on the request's thread left in `noted`."""

    def __init__(self, lines: HandlerLog | None) -> None:
        self.lines = lines
        self.noted = threading.local()

    def invoking(self, invoke: Callable[[dict[str, Any]], dict[str, Any]]) -> Callable[[dict[str, Any]], Any]:
        def invoked(event: dict[str, Any]) -> dict[str, Any]:
            try:
                return invoke(event)
            finally:
                if self.lines is not None:
                    request_id = (event.get("requestContext") or {}).get("requestId")
                    self.noted.fields = self.lines.take(request_id if isinstance(request_id, str) else None)

        return invoked

    def log(self, method: str, path: str, status: int, started: float) -> None:
        fields = getattr(self.noted, "fields", None) or {}
        self.noted.fields = None
        if self.lines is None or not self.lines.json_logs:
            log_request(request_line(method, path, status, fields, (time.perf_counter() - started) * 1000))


def _make_handler(
    gateway: Gateway, domain: str, sign_in: DevIdentityProvider | None, log: RequestLog | None
) -> type[BaseHTTPRequestHandler]:
    from .idp import MAX_BODY, Request, mounted

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True

        def _relay(self) -> None:
            started = time.perf_counter()
            if log is not None:
                log.noted.fields = None
            length = int(self.headers.get("content-length") or 0)
            body = self.rfile.read(length) if length else b""
            headers: dict[str, str] = {}
            for key, value in self.headers.items():
                key = key.lower()
                headers[key] = f"{headers[key]},{value}" if key in headers else value
            target = urlsplit(self.path)
            own = mounted(target.path) if sign_in is not None else None
            if sign_in is not None and own is not None:  # the development sign-in: this server's own route
                query = dict(parse_qsl(target.query))
                found = sign_in.respond(Request(self.command, own, query, headers, body[:MAX_BODY]))
                reply = Reply(found.status, list(found.headers), found.body)
            else:  # the TCP peer, as the front door's sourceIp: what the facade counts its per-address limits by
                peer = self.client_address[0]
                reply = gateway.handle(Call(self.command, self.path, headers, body, domain, source_ip=peer))
            self.send_response(reply.status)
            for key, value in reply.headers:
                if key.lower() not in ("content-length", "transfer-encoding", "connection"):
                    self.send_header(key, value)
            self.send_header("content-length", str(len(reply.body)))
            self.end_headers()
            self.wfile.write(reply.body)
            if log is not None:
                log.log(self.command, target.path, reply.status, started)

        do_GET = do_POST = do_DELETE = do_PUT = do_PATCH = do_OPTIONS = _relay

        def log_message(self, format: str, *args: Any) -> None:
            return

    return Handler


def listen(
    gateway: Gateway,
    host: str,
    port: int,
    *,
    sock: socket.socket | None = None,
    sign_in: DevIdentityProvider | None = None,
    log: RequestLog | None = None,
) -> ThreadingHTTPServer:
    """The HTTP side of `dev --lambda`, on `host:port` (or `sock`, bound there): each request, from its TCP
    peer, to `gateway`; the development sign-in's routes to `sign_in`."""
    server = _Server((host, port), _make_handler(gateway, f"{host}:{port}", sign_in, log), bind_and_activate=False)
    server.socket.close()
    server.socket = sock if sock is not None else bind(host, port)
    server.server_address = server.socket.getsockname()[:2]
    server.server_name, server.server_port = host, port
    return server


def serve(
    target: str,
    host: str,
    port: int,
    api: ApiType = "http",
    caller: Caller | None = None,
    *,
    json_logs: bool = False,
    sockets: list[socket.socket] | None = None,
) -> None:
    """Serve `target` through the Lambda handlers on `host:port` (on `sockets[0]`: a `--reload` child)."""
    from .idp import from_env
    from .signin import banner, base_url

    os.environ["LAMBDA_MCP_APP"] = target
    os.environ.setdefault("LAMBDA_MCP_STATE_KEY", secrets.token_urlsafe(32))
    # `lambda-mcp dev` is open unless told otherwise; an emulated authorizer's caller means auth `gateway`
    os.environ.setdefault("LAMBDA_MCP_AUTH", "gateway" if caller is not None else "none")
    path = f"/{REST_STAGE}/mcp" if api == "rest" else "/mcp"
    if api == "rest":  # the authorizer checks tokens for this audience, as for the API's own URL in AWS
        os.environ.setdefault("LAMBDA_MCP_RESOURCE_URL", f"{base_url(host, port)}{path}")
    from .poller import prepare_queues, start_local_worker

    prepare_queues()  # before the kit is built: it reads the queue URL
    durable = None
    if os.environ.get("LAMBDA_MCP_TASK_BACKEND") == "durable":  # `--task-backend durable`: its local runner
        from .durable import prepare as prepare_durable

        durable = prepare_durable()
    invoker = _Invoker()
    lines = HandlerLog(sys.stdout, json_logs=json_logs)
    _log_through(lines)
    log = RequestLog(lines)
    sign_in = from_env(base_url(host, port))
    authorize = None
    if api == "rest" and os.environ["LAMBDA_MCP_AUTH"] in ("jwt", "proxy"):  # template.yaml's authorizer in front
        authorize = _Invoker("lambda_mcp.entrypoints.authorizer").invoke
    worker = start_local_worker()  # after the HTTP handler: both share its kit
    gateway = Gateway(api, log.invoking(invoker.invoke), authorize, caller)
    try:
        server = listen(gateway, host, port, sock=sockets[0] if sockets else None, sign_in=sign_in, log=log)
    except OSError:  # already one line: the address, the reason and the fix (dev.cannot_listen)
        worker.stop()
        if durable is not None:
            durable.stop()
        raise
    signal.signal(signal.SIGTERM, _interrupt)  # stop like Ctrl-C, so callers' cleanup runs
    state = os.environ.get("LAMBDA_MCP_TABLE_NAME")
    front = {"http": "HTTP API v2", "rest": "REST API v1", "url": "Function URL"}[api]
    print(
        f"lambda-mcp dev --lambda: {base_url(host, port)}{path} -> {front} event -> Lambda handler (buffered), "
        + (f"state in DynamoDB table {state}" if state else "in-memory state")
        + f", auth {os.environ['LAMBDA_MCP_AUTH']}; tasks: "
        + (
            f"durable executions (local runner, {durable.endpoint}) -> durable worker handler"
            if durable is not None
            else f"{worker.queue_url} -> worker handler"
        ),
        flush=True,
    )
    if sign_in is not None:
        print(banner(base_url(host, port)), flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
        worker.stop()
        if durable is not None:
            durable.stop()


def serve_reloaded(
    target: str,
    host: str,
    port: int,
    api: ApiType,
    caller: Caller | None,
    json_logs: bool,
    *,
    sockets: list[socket.socket],
) -> None:
    """`serve` in a `--reload` child: a mistake in the app is one line, and the reloader waits for a change."""
    from ..config import ConfigError
    from ..loader import AppLoadError

    try:
        serve(target, host, port, api, caller, json_logs=json_logs, sockets=sockets)
    except (AppLoadError, ConfigError) as exc:
        print(f"lambda-mcp dev: {exc} (waiting for a change)", file=sys.stderr, flush=True)


def _log_through(lines: HandlerLog) -> None:
    """The Lambda handlers' log lines (one logger: the HTTP handler's and the worker's) through `lines`."""
    from ..entrypoints._kit import lambda_observer

    handler = lambda_observer().logger.registered_handler
    if hasattr(handler, "setStream"):
        handler.setStream(lines)


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt
