"""A stand-in for AWS Lambda's Invoke API on 127.0.0.1, for the Lambda-tool tests: point
`AWS_ENDPOINT_URL_LAMBDA` at `url` and botocore's `invoke` lands here.

It answers `POST /2015-03-31/functions/{name}/invocations` (`?Qualifier=` optional; `name` a function name,
`name:qualifier` or an ARN) as Lambda's synchronous invocation does, running a Python handler registered
under the function's name with the payload as its event and a context whose `client_context.custom` is
what the caller sent in `X-Amz-Client-Context`:
- the handler's return value, as JSON, with status 200;
- a handler that raises: status 200, `X-Amz-Function-Error: Unhandled` and Lambda's Python runtime's body
  (`errorMessage`, `errorType`, `requestType`, `stackTrace`);
- an unknown function: 404 `ResourceNotFoundException`, in the `x-amzn-ErrorType` header and the JSON body
  botocore reads; `refuse(name, status, code)` answers any other AWS error for a function.
Every request is recorded (`invocations`): the function, qualifier, payload, client context, and the
service and region its SigV4 `Authorization` header was made for (None: unsigned).
"""

from __future__ import annotations

import base64
import json
import time
import traceback
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler
from types import SimpleNamespace
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

from .loopback import LoopbackServer, respond

ACCOUNT = "123456789012"
REGION = "us-east-1"
PREFIX = "/2015-03-31/functions/"
Handler = Callable[[Any, Any], Any]


@dataclass(frozen=True)
class Invocation:
    """One request the stand-in received."""

    function: str
    qualifier: str | None
    payload: Any
    client_context: dict[str, Any] | None
    signed_for: str | None
    """The SigV4 service of the `Authorization` header's credential scope (`lambda`), None when unsigned."""
    region: str | None
    invocation_type: str | None


@dataclass(frozen=True)
class Refusal:
    status: int
    code: str
    message: str


class FunctionContext:
    """What a Python handler's `context` holds (the parts a tool's function reads)."""

    def __init__(self, name: str, qualifier: str | None, client_context: dict[str, Any] | None) -> None:
        self.function_name = name
        self.function_version = "$LATEST"
        self.invoked_function_arn = f"arn:aws:lambda:{REGION}:{ACCOUNT}:function:{name}" + (
            f":{qualifier}" if qualifier else ""
        )
        self.aws_request_id = str(uuid.uuid4())
        self.memory_limit_in_mb = 128
        self.identity = None
        self.client_context = (
            None
            if client_context is None
            else SimpleNamespace(
                custom=client_context.get("custom"), env=client_context.get("env"), client=client_context.get("client")
            )
        )
        self._deadline = time.monotonic() + 30

    def get_remaining_time_in_millis(self) -> int:
        return max(0, int((self._deadline - time.monotonic()) * 1000))


class LambdaEndpoint:
    """The stand-in, serving from a daemon thread until `stop()`."""

    def __init__(self) -> None:
        self.functions: dict[str, Handler] = {}
        self.refusals: dict[str, Refusal] = {}
        self.invocations: list[Invocation] = []
        self._server = LoopbackServer(self._serve, methods=("POST", "GET"), protocol="HTTP/1.1")
        self.url = self._server.url

    def register(self, name: str, handler: Handler) -> None:
        self.functions[name] = handler

    def refuse(self, name: str, status: int, code: str, message: str = "refused by the stand-in") -> None:
        """Answer every invocation of `name` with this AWS error (the function is not run)."""
        self.refusals[name] = Refusal(status, code, message)

    def received(self, name: str) -> list[Invocation]:
        return [invocation for invocation in self.invocations if invocation.function == name]

    def stop(self) -> None:
        self._server.stop()

    def _serve(self, handler: BaseHTTPRequestHandler) -> None:
        body = handler.rfile.read(int(handler.headers.get("content-length") or 0))
        url = urlsplit(handler.path)
        if handler.command != "POST" or not url.path.startswith(PREFIX) or not url.path.endswith("/invocations"):
            return self._error(handler, 404, "UnknownOperationException", f"no such operation: {url.path}")
        name, qualifier = _function(unquote(url.path[len(PREFIX) : -len("/invocations")]))
        qualifier = parse_qs(url.query).get("Qualifier", [qualifier])[0]
        service, region = _scope(handler.headers.get("authorization", ""))
        raw_context = handler.headers.get("x-amz-client-context")
        client_context = json.loads(base64.b64decode(raw_context)) if raw_context else None
        payload = json.loads(body) if body else None
        invocation_type = handler.headers.get("x-amz-invocation-type")
        self.invocations.append(Invocation(name, qualifier, payload, client_context, service, region, invocation_type))
        if name in self.refusals:
            refusal = self.refusals[name]
            return self._error(handler, refusal.status, refusal.code, refusal.message)
        function = self.functions.get(name)
        if function is None:
            arn = f"arn:aws:lambda:{REGION}:{ACCOUNT}:function:{name}" + (f":{qualifier}" if qualifier else "")
            return self._error(handler, 404, "ResourceNotFoundException", f"Function not found: {arn}")
        context = FunctionContext(name, qualifier, client_context)
        try:
            answer = json.dumps(function(payload, context)).encode()
        except Exception as exc:
            error = {
                "errorMessage": str(exc),
                "errorType": type(exc).__name__,
                "requestId": context.aws_request_id,
                "stackTrace": traceback.format_tb(exc.__traceback__),
            }
            headers = [("X-Amz-Function-Error", "Unhandled"), ("X-Amz-Executed-Version", "$LATEST")]
            return respond(handler, 200, json.dumps(error).encode(), headers=headers)
        respond(handler, 200, answer, headers=[("X-Amz-Executed-Version", "$LATEST")])

    @staticmethod
    def _error(handler: BaseHTTPRequestHandler, status: int, code: str, message: str) -> None:
        body = json.dumps({"Type": "User", "message": message}).encode()
        headers = [("x-amzn-ErrorType", code), ("x-amzn-RequestId", str(uuid.uuid4()))]
        respond(handler, status, body, headers=headers)


def _function(named: str) -> tuple[str, str | None]:
    """The function's name and the qualifier in `named` (a name, `name:qualifier`, or an ARN)."""
    if named.startswith("arn:"):
        named = named.split(":function:", 1)[1]
    name, _, qualifier = named.partition(":")
    return name, qualifier or None


def _scope(authorization: str) -> tuple[str | None, str | None]:
    """The service and region of a SigV4 `Authorization` header's credential scope."""
    if not authorization.startswith("AWS4-HMAC-SHA256 "):
        return None, None
    for part in authorization[len("AWS4-HMAC-SHA256 ") :].split(","):
        key, _, value = part.strip().partition("=")
        if key == "Credential":
            scope = value.split("/")  # key id / date / region / service / aws4_request
            if len(scope) == 5 and scope[4] == "aws4_request":
                return scope[3], scope[2]
    return None, None
