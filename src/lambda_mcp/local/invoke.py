"""`lambda-mcp invoke`: one Lambda event (a file, or a `tools/call` built with `--tool`) through the
handler it belongs to, the function's log lines on stderr and its response on stdout.

A tool that asks the client something is answered on 2026-07-28 from the command line, as a client
would over several invocations (each round its own invocation, as in Lambda): `--elicit JSON` (the
accepted form's content, or `{"action": "decline"}`), `--sample TEXT` (the model's reply) and `--root
URI`. Without the flag, the handler refuses for want of the capability, and invoke says which flag to
pass (exit status 1).
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import json
import os
import re
import secrets
import sys
from collections.abc import Callable
from typing import Any

from ..protocol import revisions
from .context import LambdaContext
from .gateways import API_TYPES, ApiType
from .usage import UsageError, project_app

Handler = Callable[[dict[str, Any], Any], Any]
MAX_ROUNDS = 20
FLAGS = {
    "elicitation": '--elicit \'{"field": "value"}\' (the accepted form\'s content, or \'{"action": "decline"}\')',
    "sampling": "--sample TEXT (the model's reply)",
    "roots": "--root URI (once per root)",
}
_UNDECLARED = re.compile(r"the client did not declare the '(\w+)' capability")


def add_parser(commands: Any, formatter: type[argparse.HelpFormatter]) -> None:
    invoke = commands.add_parser(
        "invoke",
        help="run one Lambda event (a JSON file, or a tools/call built with --tool) through its handler",
        formatter_class=formatter,
    )
    invoke.add_argument(
        "event",
        nargs="?",
        help="an API Gateway / Function URL event JSON file (to the HTTP handler), or an SQS or scheduled"
        " event (to the task worker handler)",
    )
    invoke.add_argument(
        "--app", help="path/to/file.py[:app] or module[:app] (in a project made by `lambda-mcp new`: app/app.py)"
    )
    invoke.add_argument("--tool", metavar="NAME", help="instead of EVENT: build a tools/call event for this tool")
    invoke.add_argument("--arguments", metavar="JSON", default="{}", help="with --tool: the tool's arguments")
    invoke.add_argument("--api", choices=API_TYPES, default="http", help="with --tool: the front door's event shape")
    invoke.add_argument(
        "--protocol-version",
        choices=revisions.SUPPORTED,
        default=revisions.MODERN,
        help="with --tool: the MCP revision (a legacy one opens a session first, in the same process)",
    )
    invoke.add_argument("--elicit", metavar="JSON", help="with --tool: answer the tool's elicitation with this")
    invoke.add_argument("--sample", metavar="TEXT", help="with --tool: answer the tool's sampling request with this")
    invoke.add_argument("--root", metavar="URI", action="append", help="with --tool: a root the client offers")
    invoke.add_argument("--session-id", help="fill the event's REPLACE_WITH_SESSION_ID placeholder")
    invoke.add_argument("--aws-endpoint", metavar="URL", help="keep state in DynamoDB at this local endpoint")
    invoke.add_argument("--table", help="state table name")


def run(args: argparse.Namespace) -> int:
    from .events import handler_for

    if (args.event is None) == (args.tool is None):
        raise UsageError("give an EVENT file or --tool NAME (with --arguments JSON), one of the two")
    app = project_app(args.app, "--app")
    answers = Answers.from_args(args)
    event: dict[str, Any] | None = None
    kind = "http"
    if args.event is not None:
        event = _read_event(args.event, args.session_id)
        found = handler_for(event)
        if found is None:
            raise UsageError(
                f"{args.event} is no event lambda-mcp can invoke: expected an API Gateway or Function URL request,"
                " SQS records (aws:sqs) or a scheduled event (aws.events)"
            )
        kind = found
    arguments = _arguments(args.arguments) if args.tool is not None else {}
    os.environ["LAMBDA_MCP_APP"] = app
    os.environ.setdefault("LAMBDA_MCP_AUTH", "none")
    os.environ.setdefault("LAMBDA_MCP_STATE_KEY", secrets.token_urlsafe(32))  # seals a round's requestState
    if args.aws_endpoint:
        from .aws import configure

        configure(args.aws_endpoint, args.table)
    with contextlib.redirect_stdout(sys.stderr):  # the function's log lines: stderr; its response: stdout
        handler = _entrypoint(kind)
        if event is None:
            response = _call_tool(handler, args.tool, arguments, args.api, args.protocol_version, answers)
        else:
            response = handler(event, LambdaContext())
    json.dump(response, sys.stdout, indent=2)
    sys.stdout.write("\n")
    missing = wanted_capability(response) if event is None else None
    if missing is None:
        return 0
    legacy = revisions.is_legacy(args.protocol_version)
    fix = f"pass {FLAGS[missing]}" + (f" and --protocol-version {revisions.MODERN}" if legacy else "")
    print(
        f"lambda-mcp invoke: the tool asks the client for {missing}, which this call did not offer: {fix}",
        file=sys.stderr,
    )
    return 1


class Answers:
    """What `invoke --tool` answers when the tool asks the client (2026-07-28), from its flags."""

    def __init__(self, elicit: dict[str, Any] | None, sample: str | None, roots: list[str] | None) -> None:
        self.elicit, self.sample, self.roots = elicit, sample, roots

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> Answers:
        elicit = None
        if args.elicit is not None:
            try:
                elicit = json.loads(args.elicit)
            except json.JSONDecodeError as exc:
                raise UsageError(f"--elicit is not JSON: {exc.msg} at column {exc.colno}") from None
            if not isinstance(elicit, dict):
                raise UsageError('--elicit must be a JSON object: the form\'s content, or {"action": "decline"}')
        answers = cls(elicit, args.sample, args.root)
        if answers.capabilities() and (args.tool is None or revisions.is_legacy(args.protocol_version)):
            raise UsageError(
                f"--elicit, --sample and --root answer a --tool call on {revisions.MODERN} (a legacy session asks"
                " on its SSE stream: try `lambda-mcp dev --lambda` and `lambda-mcp call`)"
            )
        return answers

    def capabilities(self) -> dict[str, Any]:
        offered: dict[str, Any] = {}
        if self.elicit is not None:
            offered["elicitation"] = {"form": {}}
        if self.sample is not None:
            offered["sampling"] = {}
        if self.roots is not None:
            offered["roots"] = {}
        return offered

    def answer(self, method: str) -> dict[str, Any]:
        if method == "elicitation/create" and self.elicit is not None:
            return self.elicit if "action" in self.elicit else {"action": "accept", "content": self.elicit}
        if method == "sampling/createMessage" and self.sample is not None:
            content = {"type": "text", "text": self.sample}
            return {"role": "assistant", "content": content, "model": "lambda-mcp-invoke", "stopReason": "endTurn"}
        if method == "roots/list" and self.roots is not None:
            return {"roots": [{"uri": uri} for uri in self.roots]}
        raise UsageError(f"the tool asked the client for {method}, which lambda-mcp invoke cannot answer")


def wanted_capability(response: object) -> str | None:
    """The client capability a tool call failed for want of (one invoke has a flag for), if any: the
    2026 error `requiredCapabilities`, or a legacy tool's error result saying it was not declared."""
    message = _message(response)
    error = message.get("error")
    if isinstance(error, dict):
        required = (
            (error.get("data") or {}).get("requiredCapabilities") if isinstance(error.get("data"), dict) else None
        )
        names = [name for name in (required or {}) if name in FLAGS] if isinstance(required, dict) else []
        return names[0] if names else None
    result = message.get("result")
    if isinstance(result, dict) and result.get("isError"):
        for block in result.get("content") or []:
            found = _UNDECLARED.search(str(block.get("text", ""))) if isinstance(block, dict) else None
            if found and found.group(1) in FLAGS:
                return found.group(1)
    return None


def _message(response: object) -> dict[str, Any]:
    """The JSON-RPC message in a Lambda HTTP response (a JSON body, or the last `data:` of an SSE one)."""
    if not isinstance(response, dict) or not isinstance(response.get("body"), str):
        return {}
    body = response["body"]
    text = base64.b64decode(body).decode(errors="replace") if response.get("isBase64Encoded") else body
    datas = [line[5:].strip() for line in text.splitlines() if line.startswith("data:") and line[5:].strip()]
    try:
        found = json.loads(datas[-1] if datas else text)
    except ValueError:
        return {}
    return found if isinstance(found, dict) else {}


def _entrypoint(kind: str) -> Handler:
    """The Lambda handler of the HTTP function or of the task worker, imported (its cold start) now."""
    if kind == "worker":
        from .poller import prepare_queues

        prepare_queues()  # the worker needs a task queue: in memory, unless one is configured
        from ..entrypoints import worker

        return worker.handler
    from ..entrypoints import http

    return http.handler


def _read_event(path: str, session_id: str | None) -> dict[str, Any]:
    try:
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
    except FileNotFoundError:
        raise UsageError(f"no such event file: {path}") from None
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc.strerror}") from None
    if session_id:
        text = text.replace("REPLACE_WITH_SESSION_ID", session_id)
    try:
        event: dict[str, Any] = json.loads(text)
    except json.JSONDecodeError as exc:
        raise UsageError(f"{path} is not JSON: {exc.msg} at line {exc.lineno} column {exc.colno}") from None
    return event


def _arguments(text: str) -> dict[str, Any]:
    try:
        arguments = json.loads(text)
    except json.JSONDecodeError as exc:
        raise UsageError(f"--arguments is not JSON: {exc.msg} at column {exc.colno}") from None
    if not isinstance(arguments, dict):
        raise UsageError(f"--arguments must be a JSON object of the tool's arguments, like '{{\"a\": 1}}', not {text}")
    return arguments


def _call_tool(
    handler: Handler, tool: str, arguments: dict[str, Any], api: ApiType, version: str, answers: Answers
) -> Any:
    """`tools/call` through `handler` as the front door `api` would deliver it; on a legacy revision after an
    `initialize` (and `notifications/initialized`) in this process, whose session it then uses; on 2026-07-28,
    a result asking for input answered from `answers` and the call sent again (one invocation per round)."""
    from .events import initialize, initialized, request_event, tool_call

    session_id = None
    if revisions.is_legacy(version):
        opened = handler(request_event(api, initialize(version), version), LambdaContext())
        headers = {k.lower(): v for k, v in (opened.get("headers") or {}).items()}
        session_id = headers.get("mcp-session-id")
        if session_id is None:
            raise UsageError(f"initialize opened no session (status {opened.get('statusCode')}): {opened.get('body')}")
        handler(request_event(api, initialized(), version, session_id), LambdaContext())
    call = tool_call(tool, arguments, version, capabilities=answers.capabilities())
    for _ in range(MAX_ROUNDS):
        response = handler(request_event(api, call, version, session_id), LambdaContext())
        result = _message(response).get("result")
        if not isinstance(result, dict) or result.get("resultType") != "input_required":
            return response
        asked = result.get("inputRequests") or {}
        responses = {
            key: answers.answer(str(wanted.get("method")) if isinstance(wanted, dict) else "?")
            for key, wanted in asked.items()
        }
        params = {**call["params"], "inputResponses": responses}
        if "requestState" in result:
            params["requestState"] = result["requestState"]
        call = {**call, "params": params}
    raise UsageError(f"the tool asked for input {MAX_ROUNDS} times over; giving up")
