"""Lambda functions as tools (`app.lambda_tool`): the declaration's checks, and each call as one synchronous
`Invoke` of the function, with the call's arguments as its event and the caller in its client context.

- The event is exactly the call's arguments (a JSON object). The client context's `custom` map holds
  `principal` (the caller, `ctx.principal`; absent under auth `none`), `tool`, `requestId` and, when the
  call runs as a task, `taskId`: the function reads them as `context.client_context.custom`.
- The answer: a function error is a tool error naming the function, its `errorType` and `errorMessage`
  (never its `stackTrace`); a JSON object with a `content` list is the result as it is (a
  `CallToolResult`); with an `output_schema` the answer (a JSON object) is the structured content;
  anything else is one text block (JSON for what is not a string).
- AWS refusing the call (no such function, access denied, throttled, too large) or not answering is a
  tool error naming the function and the AWS error code; the details (ARNs, roles) go to the log only.
- One botocore Lambda client per process and region, made at the first call (`storage.aws_clients`, so
  `AWS_ENDPOINT_URL_LAMBDA` points it at a local stand-in, as it does every AWS SDK), without retries: an
  invocation is not idempotent, and a retried one would run the function twice. Each call's read timeout
  is what is left of the request's deadline (`seconds_left`); the wait for the call ends then even where
  the runtime's botocore is too old to take a read timeout per call.
"""

from __future__ import annotations

import base64
import functools
import json
import logging
import os
import re
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..protocol.names import is_tool_name
from ._refusals import refused
from .errors import ToolError
from .outbound.http import seconds_left
from .tools import Tool, forwarding_tool

if TYPE_CHECKING:
    from .context import Context

logger = logging.getLogger("lambda_mcp")

_NAME = r"[A-Za-z0-9_-]{1,64}"
_QUALIFIER = r"\$LATEST|[A-Za-z0-9_-]{1,128}"
FUNCTION = re.compile(
    rf"(?:arn:aws[a-z-]*:lambda:(?P<region>[a-z]{{2}}(?:-[a-z]+)+-\d+):\d{{12}}:function:)?"
    rf"(?P<name>{_NAME})(?::(?P<qualifier>{_QUALIFIER}))?"
)
"""A function name, `name:alias` / `name:version`, or a function's ARN (qualified or not)."""
QUALIFIER = re.compile(_QUALIFIER)
TASK_SUPPORT = ("forbidden", "optional", "required")
MAX_CLIENT_CONTEXT = 3583
"""Lambda's limit on the base64 client context, in bytes."""
MAX_SECONDS = 900.0
"""The longest a synchronous invocation can run (Lambda's longest timeout): the wait without a deadline."""
CONNECT_SECONDS = 5.0
MAX_ERROR_CHARS = 300
"""A function's error message longer than this is cut (to its first line, then to this length)."""
_HINTS = {
    "ResourceNotFoundException": "no such function",
    "AccessDeniedException": "this server may not invoke it",
    "AccessDenied": "this server may not invoke it",
    "TooManyRequestsException": "throttled, try again later",
    "RequestTooLargeException": "the arguments are too large for Lambda (6 MB)",
    "RequestEntityTooLargeException": "the arguments are too large for Lambda (6 MB)",
}
_call = threading.local()
"""The read timeout of the invocation the current thread is making (read by the client's event handler)."""


@dataclass(frozen=True)
class Target:
    """The function a tool invokes: `function` and `qualifier` as `Invoke` takes them, `region` from its ARN
    (None: the environment's), `shown` how errors name it (without account or region)."""

    function: str
    qualifier: str | None
    region: str | None
    shown: str


def lambda_tool(
    name: str,
    *,
    function: str,
    input_schema: dict[str, Any] | None,
    description: str | None,
    title: str | None,
    output_schema: dict[str, Any] | None,
    annotations: dict[str, Any] | None,
    scopes: Iterable[str],
    task_support: str | None,
    qualifier: str | None,
) -> Tool:
    """The tool `name` that invokes `function`; `DeclarationError` (naming what is wrong, at the caller's
    line) for a name, a function, a schema or a task support the kit cannot serve."""
    if not is_tool_name(name):
        raise refused(
            f"app.lambda_tool({name!r}): a tool name is 1 to 128 ASCII letters, digits, '_', '-' or '.'"
            " (no spaces), e.g. 'lookup_order'"
        )
    owner = f"app.lambda_tool({name!r})"
    target = _target(owner, function, qualifier)
    definition: dict[str, Any] = {
        "name": name,
        "inputSchema": _object_schema(
            owner, "input_schema", {"type": "object"} if input_schema is None else input_schema
        ),
    }
    if title:
        definition["title"] = title
    if description:
        definition["description"] = description
    if output_schema is not None:
        definition["outputSchema"] = _object_schema(owner, "output_schema", output_schema)
    if annotations:
        definition["annotations"] = annotations
    if task_support is not None:
        if task_support not in TASK_SUPPORT:
            raise refused(f"{owner}: task_support={task_support!r}; use one of {', '.join(map(repr, TASK_SUPPORT))}")
        definition["execution"] = {"taskSupport": task_support}
    invocation = Invocation(name, target, structured=output_schema is not None)
    return forwarding_tool(invocation.call, definition, scopes=scopes, structured=output_schema is not None)


def _target(owner: str, function: object, qualifier: object) -> Target:
    found = FUNCTION.fullmatch(function) if isinstance(function, str) else None
    if found is None:
        raise refused(
            f"{owner}: function={function!r} is not a Lambda function: give its name ('orders'), its name with"
            " an alias or version ('orders:live', 'orders:3'), or its ARN"
            " (arn:aws:lambda:<region>:<account>:function:orders)"
        )
    if qualifier is not None:
        if not isinstance(qualifier, str) or not QUALIFIER.fullmatch(qualifier):
            raise refused(f"{owner}: qualifier={qualifier!r} is not an alias or a version ('live', '3', '$LATEST')")
        if found.group("qualifier"):
            raise refused(f"{owner}: function={function!r} already names a version or alias; drop qualifier=")
    assert isinstance(function, str)
    shown = found.group("name") + (f":{found.group('qualifier')}" if found.group("qualifier") else "")
    if qualifier:
        shown += f":{qualifier}"
    return Target(function, qualifier, found.group("region"), shown)


def _object_schema(owner: str, argument: str, schema: object) -> dict[str, Any]:
    if not isinstance(schema, dict) or schema.get("type") != "object":
        raise refused(
            f"{owner}: {argument} must be a JSON Schema of an object ({{'type': 'object', 'properties': ...}}),"
            f" not {schema!r:.80}"
        )
    if "properties" in schema and not isinstance(schema["properties"], dict):
        raise refused(f"{owner}: {argument}'s properties must be an object mapping names to schemas")
    return schema


class Invocation:
    """Runs a call of one Lambda tool: invoke, then map the answer or the failure to a result."""

    def __init__(self, tool: str, target: Target, *, structured: bool) -> None:
        self.tool = tool
        self.target = target
        self.structured = structured

    async def call(self, arguments: dict[str, Any], ctx: Context) -> dict[str, Any]:
        import anyio  # with the first call, not the app's import

        timeout = seconds_left(ctx, MAX_SECONDS)
        params: dict[str, Any] = {
            "FunctionName": self.target.function,
            "InvocationType": "RequestResponse",
            "Payload": json.dumps(arguments, separators=(",", ":"), ensure_ascii=False).encode(),
            "ClientContext": client_context(self.tool, ctx),
        }
        if self.target.qualifier:
            params["Qualifier"] = self.target.qualifier
        try:
            with anyio.fail_after(timeout):  # where botocore ignores the read timeout, the wait still ends
                error, payload = await anyio.to_thread.run_sync(self._invoke, params, timeout, abandon_on_cancel=True)
        except TimeoutError:
            raise ToolError(f"the function {self.target.shown} did not answer within {timeout:.3g} s") from None
        return self.answer(error, payload)

    def _invoke(self, params: dict[str, Any], timeout: float) -> tuple[str | None, bytes]:
        """Blocking, in a worker thread: the function's error kind (None: it answered) and its payload."""
        from botocore.exceptions import BotoCoreError, ClientError, ReadTimeoutError

        _call.read_timeout = timeout
        try:
            response = lambda_client(self.target.region).invoke(**params)
            return response.get("FunctionError"), response["Payload"].read()
        except ClientError as exc:
            code = str(exc.response.get("Error", {}).get("Code") or "an unnamed error")
            logger.warning("lambda tool %s: invoking %s failed: %s", self.tool, self.target.function, exc)
            hint = f" ({_HINTS[code]})" if code in _HINTS else ""
            raise ToolError(f"the function {self.target.shown} could not be invoked: {code}{hint}") from None
        except ReadTimeoutError:
            raise ToolError(f"the function {self.target.shown} did not answer within {timeout:.3g} s") from None
        except BotoCoreError as exc:  # no endpoint, no connection, no credentials, no region
            logger.warning("lambda tool %s: invoking %s failed: %s", self.tool, self.target.function, exc)
            kind = type(exc).__name__
            raise ToolError(f"the function {self.target.shown} could not be reached: {kind}") from None
        finally:
            _call.read_timeout = None

    def answer(self, error: str | None, payload: bytes) -> dict[str, Any]:
        """The call's result for the function's answer (`error`: its `FunctionError`, if any)."""
        try:
            value = json.loads(payload) if payload else None
        except ValueError:  # a custom runtime may answer with anything
            value = payload.decode("utf-8", "replace")
        if error:
            failure = _failure(value)
            logger.warning("lambda tool %s: the function %s failed: %s", self.tool, self.target.function, failure)
            raise ToolError(f"the function {self.target.shown} failed: {failure}")
        if isinstance(value, dict) and isinstance(value.get("content"), list):
            return value
        if self.structured:
            if not isinstance(value, dict):
                kind = "nothing" if value is None else f"a JSON {type(value).__name__}"
                raise ToolError(
                    f"the function {self.target.shown} answered {kind}, not the object its output schema describes"
                )
            return {"content": [{"type": "text", "text": json.dumps(value)}], "structuredContent": value}
        text = value if isinstance(value, str) else json.dumps(value)
        return {"content": [{"type": "text", "text": text}]}


def _failure(value: Any) -> str:
    """`errorType: errorMessage` of a function error (what Lambda's runtimes answer), bounded."""
    if isinstance(value, dict):
        parts = [value.get("errorType"), value.get("errorMessage")]
        text = ": ".join(str(part) for part in parts if part not in (None, ""))
    else:
        text = "" if value is None else value if isinstance(value, str) else json.dumps(value)
    text = text.strip()
    if len(text) > MAX_ERROR_CHARS:
        text = text.splitlines()[0]
    if len(text) > MAX_ERROR_CHARS:
        text = text[: MAX_ERROR_CHARS - 1] + "…"
    return text or "no error message"


def client_context(tool: str, ctx: Context) -> str:
    """The base64 JSON client context (`custom`: `principal`, `tool`, `requestId`, `taskId`), at most Lambda's
    3,583 bytes: without `requestId` and `taskId` if need be; `ToolError` if the principal alone is too long."""
    custom: dict[str, str] = {}
    if ctx.principal is not None:
        custom["principal"] = ctx.principal
    custom["tool"] = tool
    if ctx.request_id is not None:
        custom["requestId"] = str(ctx.request_id)
    if ctx.task_id:
        custom["taskId"] = ctx.task_id
    encoded = _encoded(custom)
    if len(encoded) > MAX_CLIENT_CONTEXT:
        custom.pop("requestId", None)
        custom.pop("taskId", None)
        encoded = _encoded(custom)
    if len(encoded) > MAX_CLIENT_CONTEXT:
        raise ToolError("the caller's principal is too long to pass to the function (Lambda's client context)")
    return encoded


def _encoded(custom: dict[str, str]) -> str:
    text = json.dumps({"custom": custom}, separators=(",", ":"), ensure_ascii=False)
    return base64.b64encode(text.encode()).decode()


def lambda_client(region: str | None = None) -> Any:
    """The process's Lambda client for `region` (None: the environment's), made at its first use; a new one
    when `AWS_ENDPOINT_URL_LAMBDA` changes (as tests do)."""
    return _client(region, os.environ.get("AWS_ENDPOINT_URL_LAMBDA"))


@functools.cache
def _client(region: str | None, endpoint: str | None) -> Any:
    from ..storage.aws_clients import client

    config: dict[str, Any] = {
        "read_timeout": MAX_SECONDS,
        "connect_timeout": CONNECT_SECONDS,
        "retries": {"total_max_attempts": 1},
    }
    if region is not None:
        config["region_name"] = region
    made = client("lambda", **config)
    made.meta.events.register("before-call.lambda.Invoke", _read_timeout)
    return made


def _read_timeout(context: dict[str, Any], **kwargs: Any) -> None:
    """The invocation's own read timeout, in the request context (where a recent botocore reads one per request;
    an older one keeps the client's, and `Invocation.call` stops waiting at the deadline all the same)."""
    timeout = getattr(_call, "read_timeout", None)
    if timeout is not None:
        context["read_timeout"] = timeout
