"""API Gateway emulation for `lambda-mcp dev --lambda`: HTTP request -> HTTP API v2 event -> the real handler.

Every request goes through `lambda_mcp.entrypoints.http.handler` (Mangum, buffered), one at a time
like a single Lambda execution environment, with a fake context honouring remaining time. Tasks
go through the task queue to `lambda_mcp.entrypoints.worker.handler` (local/poller.py).
"""

from __future__ import annotations

import asyncio
import base64
import concurrent.futures
import importlib
import os
import secrets
import signal
import time
import uuid
from collections.abc import Callable
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

TIMEOUT_MS = 30_000


class LambdaContext:
    """The parts of the Lambda context object handlers use."""

    def __init__(self, timeout_ms: int = TIMEOUT_MS) -> None:
        self.function_name = "lambda-mcp-dev"
        self.function_version = "$LATEST"
        self.memory_limit_in_mb = 512
        self.aws_request_id = str(uuid.uuid4())
        self.invoked_function_arn = "arn:aws:lambda:us-east-1:000000000000:function:lambda-mcp-dev"
        self.log_group_name = "/aws/lambda/lambda-mcp-dev"
        self.client_context: Any = None
        self.identity: Any = None
        self.log_stream_name = "local"
        self._deadline = time.monotonic() + timeout_ms / 1000

    def get_remaining_time_in_millis(self) -> int:
        return max(0, int((self._deadline - time.monotonic()) * 1000))


def http_api_event(method: str, target: str, headers: dict[str, str], body: bytes, domain: str) -> dict[str, Any]:
    """An API Gateway HTTP API (payload 2.0) event, as API Gateway would build it."""
    parts = urlsplit(target)
    now = datetime.now(UTC)
    return {
        "version": "2.0",
        "routeKey": "$default",
        "rawPath": parts.path,
        "rawQueryString": parts.query,
        "headers": headers,
        "requestContext": {
            "accountId": "000000000000",
            "apiId": "local",
            "domainName": domain,
            "domainPrefix": domain.split(".")[0],
            "http": {
                "method": method,
                "path": parts.path,
                "protocol": "HTTP/1.1",
                "sourceIp": "127.0.0.1",
                "userAgent": headers.get("user-agent", ""),
            },
            "requestId": secrets.token_hex(8),
            "routeKey": "$default",
            "stage": "$default",
            "time": now.strftime("%d/%b/%Y:%H:%M:%S +0000"),
            "timeEpoch": int(now.timestamp() * 1000),
        },
        "body": base64.b64encode(body).decode() if body else None,
        "isBase64Encoded": bool(body),
    }


class _Invoker:
    """Runs the handler on one thread with its own event loop (Mangum needs one, and Lambda runs one at a time)."""

    def __init__(self) -> None:
        self._pool = concurrent.futures.ThreadPoolExecutor(max_workers=1, initializer=self._init_loop)
        self._handler: Callable[[dict[str, Any], Any], dict[str, Any]] = self._pool.submit(self._import).result()

    @staticmethod
    def _init_loop() -> None:
        asyncio.set_event_loop(asyncio.new_event_loop())

    @staticmethod
    def _import() -> Callable[[dict[str, Any], Any], dict[str, Any]]:
        module = importlib.import_module("lambda_mcp.entrypoints.http")
        handler: Callable[[dict[str, Any], Any], dict[str, Any]] = module.handler
        return handler

    def invoke(self, event: dict[str, Any]) -> dict[str, Any]:
        return self._pool.submit(self._handler, event, LambdaContext()).result()


def _make_handler(invoker: _Invoker, domain: str) -> type[BaseHTTPRequestHandler]:
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
            result = invoker.invoke(http_api_event(self.command, self.path, headers, body, domain))
            payload = result.get("body") or ""
            data = base64.b64decode(payload) if result.get("isBase64Encoded") else payload.encode()
            self.send_response(int(result.get("statusCode", 200)))
            for key, value in (result.get("headers") or {}).items():
                if key.lower() not in ("content-length", "transfer-encoding", "connection"):
                    self.send_header(key, str(value))
            for cookie in result.get("cookies") or []:
                self.send_header("set-cookie", cookie)
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        do_GET = do_POST = do_DELETE = do_PUT = do_PATCH = do_OPTIONS = _relay

        def log_message(self, format: str, *args: Any) -> None:
            return

    return Handler


def serve(target: str, host: str, port: int) -> None:
    os.environ["LAMBDA_MCP_APP"] = target
    os.environ.setdefault("LAMBDA_MCP_STATE_KEY", secrets.token_urlsafe(32))
    from .poller import prepare_queues, start_local_worker

    prepare_queues()  # before the kit is built: it reads the queue URL
    invoker = _Invoker()
    worker = start_local_worker()  # after the HTTP handler: both share its kit
    server = ThreadingHTTPServer((host, port), _make_handler(invoker, f"{host}:{port}"))
    server.daemon_threads = True
    signal.signal(signal.SIGTERM, _interrupt)  # stop like Ctrl-C, so callers' cleanup runs
    state = os.environ.get("LAMBDA_MCP_TABLE_NAME")
    print(
        f"lambda-mcp dev --lambda: http://{host}:{port}/mcp -> HTTP API v2 event -> Lambda handler (buffered), "
        + (f"state in DynamoDB table {state}" if state else "in-memory state")
        + f"; tasks: {worker.queue_url} -> worker handler",
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
