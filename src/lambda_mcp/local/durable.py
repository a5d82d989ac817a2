"""Lambda durable functions on this machine, for `lambda-mcp dev --lambda --task-backend durable`: the durable
execution SDK's local runner (its testing package's `WebRunner`, the Lambda durable API on loopback) behind
one small front that stands in for Lambda's endpoint (`AWS_ENDPOINT_URL_LAMBDA`).

The kit's own boto3 calls go through the front as they would go to Lambda:
- `Invoke` of the worker's alias with a `DurableExecutionName` (a task's start) starts an execution on the
  runner, once per name, as Lambda does (the same name and payload answer with the execution started first;
  another payload is refused with `DurableExecutionAlreadyStartedException`);
- an `Invoke` from the runner (marked `X-Dex-Handler-Invoke`) is one invocation of the durable worker's real
  handler (`lambda_mcp.entrypoints.durable_worker.handler`), in this process;
- everything else (callbacks, stop, get, and the SDK's checkpoints) is passed to the runner as it is.

Time skipping (`LAMBDA_MCP_SKIP_WAITS`, on by default in `lambda-mcp dev`) is the runner's: a durable wait
ends at once, while its history keeps the real duration.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import importlib
import json
import logging
import os
import threading
import urllib.error
import urllib.request
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import unquote, urlsplit

from .aws import _free_port
from .context import LambdaContext

logger = logging.getLogger("lambda_mcp.local")
ACCOUNT = "123456789012"
REGION = "us-east-1"
FUNCTION = f"arn:aws:lambda:{REGION}:{ACCOUNT}:function:lambda-mcp-durable-worker:live"
"""The local durable worker's alias ARN (`LAMBDA_MCP_TASK_DURABLE_FUNCTION`)."""
HANDLER = "lambda_mcp.entrypoints.durable_worker"
MARKER = "X-Dex-Handler-Invoke"
"""The header the runner puts on its invocations of the handler (the testing package's marker)."""
INVOCATIONS_AT_ONCE = 4
Answer = tuple[int, dict[str, str], bytes]
"""An HTTP answer: status, headers, body."""


class LocalDurable:
    """The runner and its front, on loopback ports of their own; `endpoint` is the front's URL."""

    def __init__(self, *, skip_time: bool, execution_timeout_seconds: int) -> None:
        try:
            from aws_durable_execution_sdk_python_testing.runner import WebRunner, WebRunnerConfig
            from aws_durable_execution_sdk_python_testing.web.server import WebServiceConfig
        except ImportError:
            from ..config import ConfigError

            raise ConfigError(
                "--task-backend durable runs the durable execution SDK's local runner, which is not installed:"
                " pip install 'lambda-mcp[durable]' aws-durable-execution-sdk-python-testing"
            ) from None

        self.execution_timeout_seconds = execution_timeout_seconds
        self.front = _Front(("127.0.0.1", 0), _handler_class(self))
        self.endpoint = f"http://127.0.0.1:{self.front.server_address[1]}"
        runner_port = _free_port()
        self.runner_url = f"http://127.0.0.1:{runner_port}"
        self.runner = WebRunner(
            WebRunnerConfig(
                web_service=WebServiceConfig(host="127.0.0.1", port=runner_port, log_level=logging.WARNING),
                lambda_endpoint=self.endpoint,
                local_runner_region=REGION,
                skip_time=skip_time,
            )
        )
        self.started: dict[str, tuple[bytes, str]] = {}
        """Executions started through the front, by name: (payload, ARN)."""
        self._lock = threading.Lock()
        self._pool = concurrent.futures.ThreadPoolExecutor(INVOCATIONS_AT_ONCE, initializer=_init_loop)
        self._handler: Callable[[Any, Any], Any] | None = None

    def start(self) -> LocalDurable:
        self.runner.start()
        threading.Thread(target=self.runner.serve_forever, name="durable-runner", daemon=True).start()
        threading.Thread(target=self.front.serve_forever, name="durable-front", daemon=True).start()
        return self

    def stop(self) -> None:
        self.front.shutdown()
        self.front.server_close()
        self.runner.stop()
        self._pool.shutdown(wait=False, cancel_futures=True)

    def start_execution(self, function: str, name: str, payload: bytes) -> Answer:
        """A caller's `Invoke` with a `DurableExecutionName`: Lambda's answer (status, headers, body)."""
        with self._lock:
            found = self.started.get(name)
            if found is not None:
                if found[0] != payload:
                    return _error(409, "DurableExecutionAlreadyStartedException", f"execution {name} exists")
                return 202, {"X-Amz-Durable-Execution-Arn": found[1]}, b""
            qualifier = function.rsplit(":", 1)[1] if function.count(":") == 7 else "$LATEST"
            start = {
                "AccountId": ACCOUNT,
                "FunctionName": function,
                "FunctionQualifier": qualifier,
                "ExecutionName": name,
                "ExecutionTimeoutSeconds": self.execution_timeout_seconds,
                "ExecutionRetentionPeriodDays": 1,
                "Input": payload.decode(),
            }
            request = urllib.request.Request(
                f"{self.runner_url}/start-durable-execution",
                json.dumps(start).encode(),
                {"Content-Type": "application/json"},
            )
            with urllib.request.urlopen(request, timeout=30) as answer:
                arn = json.loads(answer.read())["ExecutionArn"]
            self.started[name] = (payload, arn)
        return 202, {"X-Amz-Durable-Execution-Arn": arn}, b""

    def invoke_handler(self, payload: bytes) -> Answer:
        """The runner's invocation of the durable worker's handler, on one of a few threads with loops."""
        try:
            output = self._pool.submit(self._invoke, json.loads(payload)).result()
        except BaseException as exc:  # noqa: BLE001 - a crashed invocation, as Lambda reports it; the runner retries
            logger.warning("durable worker invocation failed: %s", exc)
            body = json.dumps({"errorType": type(exc).__name__, "errorMessage": str(exc)}).encode()
            return 200, {"X-Amz-Function-Error": "Unhandled"}, body
        return 200, {}, json.dumps(output).encode()

    def _invoke(self, event: Any) -> Any:
        if self._handler is None:
            self._handler = importlib.import_module(HANDLER).handler
        handler = self._handler
        return handler(event, LambdaContext(timeout_ms=900_000))

    def forward(self, method: str, path: str, headers: dict[str, str], body: bytes) -> Answer:
        """Any other Lambda API call: to the runner, as it is."""
        kept = {k: v for k, v in headers.items() if k.lower() not in ("host", "content-length", "connection")}
        request = urllib.request.Request(self.runner_url + path, body or None, kept, method=method)
        try:
            with urllib.request.urlopen(request, timeout=60) as answer:
                return answer.status, dict(answer.headers), answer.read()
        except urllib.error.HTTPError as error:
            return error.code, dict(error.headers), error.read()


def _error(status: int, code: str, message: str) -> Answer:
    body = json.dumps({"Type": "User", "message": message}).encode()
    return status, {"X-Amzn-ErrorType": code, "Content-Type": "application/json"}, body


def _init_loop() -> None:
    asyncio.set_event_loop(asyncio.new_event_loop())


class _Front(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 64


def _handler_class(local: LocalDurable) -> type[BaseHTTPRequestHandler]:
    class Front(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def _answer(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            parts = urlsplit(self.path)
            segments = [unquote(s) for s in parts.path.strip("/").split("/")]
            invoke = self.command == "POST" and len(segments) == 4 and segments[3] == "invocations"
            if invoke and self.headers.get(MARKER):
                status, headers, answer = local.invoke_handler(body)
            elif invoke and self.headers.get("X-Amz-Durable-Execution-Name"):
                name = self.headers["X-Amz-Durable-Execution-Name"]
                status, headers, answer = local.start_execution(segments[2], name, body)
            elif invoke:
                status, headers, answer = _error(400, "InvalidParameterValueException", "local: durable starts only")
            else:
                status, headers, answer = local.forward(self.command, self.path, dict(self.headers), body)
            self.send_response(status)
            for name, value in headers.items():
                if name.lower() not in ("content-length", "transfer-encoding", "connection", "server", "date"):
                    self.send_header(name, value)
            self.send_header("Content-Length", str(len(answer)))
            self.end_headers()
            self.wfile.write(answer)

        do_GET = do_POST = do_PUT = do_DELETE = _answer

        def log_message(self, format: str, *args: Any) -> None:
            logger.debug("durable front: " + format, *args)

    return Front


def prepare() -> LocalDurable:
    """Start the local durable runner and point the kit at it (before the kit is built)."""
    from ..config import Settings

    os.environ.setdefault("LAMBDA_MCP_TASK_DURABLE_FUNCTION", FUNCTION)
    settings = Settings.from_env(default_auth="none")
    local = LocalDurable(
        skip_time=settings.skip_waits,
        execution_timeout_seconds=int(settings.task_max_ttl_seconds) + 3_600,
    ).start()
    os.environ["AWS_ENDPOINT_URL_LAMBDA"] = local.endpoint
    os.environ["LAMBDA_MCP_TASK_BACKEND"] = "durable"
    return local
