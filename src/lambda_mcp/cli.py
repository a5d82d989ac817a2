"""The `lambda-mcp` console script: `dev` runs an app locally, `serve` is the production streaming server
(behind the Lambda Web Adapter), `invoke` runs one event through the handler, `new` creates a project,
`local-aws` runs the local AWS API on its own, `call` and `list` talk to any MCP endpoint (lambda_mcp.remote),
`signout` signs a user out of the authorization facade. Expected failures are one line on stderr
(`lambda-mcp --debug ...`: the traceback)."""

from __future__ import annotations

import argparse
import contextlib
import importlib
import json
import os
import signal
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .local.aws import DEFAULT_DATA_DIR  # stdlib-only module
from .local.context import LambdaContext
from .local.gateways import API_TYPES, ApiType
from .protocol import revisions

if TYPE_CHECKING:
    from .local.gateways import Caller

Handler = Callable[[dict[str, Any], Any], Any]


DEBUG = "--debug"
EXPECTED = {
    "lambda_mcp.cli.UsageError": 2,
    "lambda_mcp.loader.AppLoadError": 2,
    "lambda_mcp.config.ConfigError": 2,
    "lambda_mcp.local.aws.LocalAWSError": 2,
    "lambda_mcp.storage.errors.StorageError": 2,
    "lambda_mcp.scaffold.ScaffoldError": 1,
    "json.decoder.JSONDecodeError": 2,
    "builtins.OSError": 2,
}
"""The exceptions a command's expected failures raise (and their subclasses), each with its exit status:
one line on stderr, no traceback."""


class UsageError(Exception):
    """A command cannot do what it was asked; the message says what went wrong and, when there is one, the fix."""


def main(argv: Sequence[str] | None = None) -> int:
    """Run a command; an expected failure is one line on stderr and exit status 2 (1 for `new`; `--debug`: the
    traceback instead)."""
    args = list(sys.argv[1:] if argv is None else argv)
    debug = args[:1] == [DEBUG]
    if debug:
        args = args[1:]
    command = args[0] if args else ""
    try:
        return _run(args)
    except KeyboardInterrupt:
        return 130
    except Exception as exc:
        status = expected(exc)
        if debug or status is None:
            raise
        print(f"lambda-mcp {command}: {explain(exc)}".rstrip(), file=sys.stderr)
        return status


def expected(exc: BaseException) -> int | None:
    """The exit status of an expected failure, None for any other exception (a bug: its traceback)."""
    for cls in type(exc).__mro__:
        status = EXPECTED.get(f"{cls.__module__}.{cls.__qualname__}")
        if status is not None:
            return status
    return None


def explain(exc: BaseException) -> str:
    """The one line for an expected failure (without its traceback or exception class)."""
    if isinstance(exc, json.JSONDecodeError):
        return f"not JSON: {exc.msg} at line {exc.lineno} column {exc.colno}"
    if isinstance(exc, OSError) and exc.strerror:
        return f"{exc.strerror}: {exc.filename}" if exc.filename else exc.strerror
    return " ".join(str(exc).split()) or type(exc).__name__


class _WithDefaults(argparse.HelpFormatter):
    """Help that shows each option's default, when it has one worth showing."""

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        if "%(default)" in text or not action.option_strings or action.default in (None, False, argparse.SUPPRESS):
            return text
        return f"{text} (default: %(default)s)"


class _Version(argparse.Action):
    """`--version`: the installed kit's version, read only when asked (its metadata lookup costs ~20 ms)."""

    def __init__(self, option_strings: Sequence[str], dest: str, **kwargs: Any) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, **kwargs)

    def __call__(self, parser: argparse.ArgumentParser, *args: Any, **kwargs: Any) -> None:
        from . import __version__

        print(f"{parser.prog} {__version__}")
        parser.exit()


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="lambda-mcp", description="Host MCP servers on AWS Lambda.")
    parser.add_argument("--version", action=_Version, help="print the kit's version and exit")
    parser.add_argument(DEBUG, action="store_true", help="show the traceback of an error (first argument only)")
    commands = parser.add_subparsers(dest="command", required=True)
    formatter = _WithDefaults
    dev = commands.add_parser("dev", help="run an app locally on 127.0.0.1", formatter_class=formatter)
    dev.add_argument("target", help="path/to/file.py[:app] or module[:app] (from the current directory)")
    dev.add_argument("--host", default="127.0.0.1", help="address to listen on")
    dev.add_argument("--port", type=int, default=8000, help="port to listen on")
    dev.add_argument(
        "--lambda",
        dest="through_lambda",
        action="store_true",
        help="serve through the real Lambda handler with API Gateway v2 events (buffered, as in production)",
    )
    dev.add_argument(
        "--aws",
        choices=["memory", "local"],
        default="memory",
        help="where state lives: in memory, or DynamoDB on a local AWS API the kit starts "
        "(DynamoDB Local when Java is present, else moto server)",
    )
    dev.add_argument(
        "--api",
        choices=API_TYPES,
        default="http",
        help="with --lambda: the front door to emulate: API Gateway HTTP API, REST API (stage v1:"
        " http://HOST:PORT/v1/mcp) or a Function URL",
    )
    dev.add_argument("--aws-endpoint", metavar="URL", help="use DynamoDB at an existing local AWS API endpoint")
    dev.add_argument(
        "--sqs-endpoint",
        metavar="URL",
        help="with --lambda: put the task queues on SQS at this local endpoint (moto server), shared by every"
        " dev server given the same one",
    )
    dev.add_argument(
        "--authorizer-claims",
        metavar="FILE",
        type=Path,
        help="with --lambda (--api http or rest): put these JWT claims (a JSON object with iss, sub, scope) on"
        " every event as the API's JWT (or Cognito) authorizer would; auth defaults to gateway",
    )
    dev.add_argument(
        "--iam-caller",
        metavar="ARN",
        help="with --lambda: every event comes from this IAM principal, as after AWS_IAM; auth defaults to gateway",
    )
    dev.add_argument("--data-dir", type=Path, default=DEFAULT_DATA_DIR, help="DynamoDB Local data")
    dev.add_argument(
        "--table", help="state table name (default when unset: $LAMBDA_MCP_TABLE_NAME or lambda-mcp-state)"
    )
    serve = commands.add_parser("serve", help="the streaming server (behind the Lambda Web Adapter)")
    serve.add_argument("target", help="path/to/file.py[:app] or module[:app]; settings: LAMBDA_MCP_* as in Lambda")
    serve.add_argument("--host", help="address to listen on (default: $AWS_LWA_HOST or 127.0.0.1)")
    serve.add_argument("--port", type=int, help="port to listen on (default: $AWS_LWA_PORT, $PORT or 8080)")
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
    invoke.add_argument("--app", required=True, help="path/to/file.py[:app] or module[:app]")
    invoke.add_argument("--tool", metavar="NAME", help="instead of EVENT: build a tools/call event for this tool")
    invoke.add_argument("--arguments", metavar="JSON", default="{}", help="with --tool: the tool's arguments")
    invoke.add_argument("--api", choices=API_TYPES, default="http", help="with --tool: the front door's event shape")
    invoke.add_argument(
        "--protocol-version",
        choices=revisions.SUPPORTED,
        default=revisions.MODERN,
        help="with --tool: the MCP revision (a legacy one opens a session first, in the same process)",
    )
    invoke.add_argument("--session-id", help="fill the event's REPLACE_WITH_SESSION_ID placeholder")
    invoke.add_argument("--aws-endpoint", metavar="URL", help="keep state in DynamoDB at this local endpoint")
    invoke.add_argument("--table", help="state table name")
    commands.add_parser(
        "signout", help="sign a user out of the authorization facade everywhere (lambda-mcp signout -h)"
    )
    commands.add_parser("local-aws", help="run the local AWS API (DynamoDB Local or moto) in the foreground")
    commands.add_parser("call", help="call a tool on any MCP endpoint, either era (lambda-mcp call --help)")
    commands.add_parser("list", help="list an MCP endpoint's tools, resources or prompts (lambda-mcp list --help)")
    new = commands.add_parser(
        "new", help="create a project of your own: an app, its tests and its SAM template", formatter_class=formatter
    )
    new.add_argument("name", help="the project's name (its directory, stack name and MCP server name)")
    new.add_argument("--directory", type=Path, default=Path("."), help="where to create it")
    new.add_argument(
        "--kit-wheel",
        type=Path,
        metavar="PATH",
        help="build the project with this lambda-mcp wheel (copied into builds/kit/), not the running kit",
    )
    return parser


def _run(argv: list[str]) -> int:
    if argv[:1] in (["local-aws"], ["signout"]):  # commands with parsers of their own
        module = importlib.import_module(".local.aws" if argv[0] == "local-aws" else ".signout", __package__)
        return int(module.main(list(argv[1:])))
    if argv[:1] in (["call"], ["list"]):
        from .remote.cli import main as remote

        return remote(list(argv))
    args = _parser().parse_args(argv)
    if args.command in ("dev", "invoke", "serve") and os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())  # module targets from the current directory, as `python -m` does
    if args.command == "dev":
        return _dev(args)
    if args.command == "new":
        return _new(args)
    if args.command == "serve":
        from .serving import serve

        serve(args.target, args.host, args.port)
        return 0
    if args.command == "invoke":
        return _invoke(args)
    return 2


def _dev(args: argparse.Namespace) -> int:
    from .local.aws import prepare
    from .local.dev import dev_signing_key

    dev_signing_key()  # LAMBDA_MCP_AUTH=proxy: a signing key for this run, unless one is configured
    caller = _caller(args)
    # Ctrl-C stops the server, even when started from a script with `&` (which starts it with SIGINT ignored)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    local = prepare(
        args.aws,
        args.aws_endpoint,
        args.data_dir,
        args.table,
        queues=args.through_lambda,
        sqs_endpoint=args.sqs_endpoint,
    )
    try:
        if args.through_lambda:
            from .local.apigw import serve as serve_lambda

            serve_lambda(args.target, args.host, args.port, args.api, caller)
        else:
            from .local.dev import serve

            serve(args.target, args.host, args.port)
    finally:
        if local is not None:
            local.stop()
    return 0


def _new(args: argparse.Namespace) -> int:
    from .scaffold import create_project

    created = create_project(args.name, args.directory, args.kit_wheel)
    print(f"created {created}; next:")
    print(f"  cd {created}")
    print("  lambda-mcp dev app/app.py      # run it locally")
    print("  python -m pytest tests         # its tests")
    print("  sam build && sam deploy --guided")
    return 0


def _invoke(args: argparse.Namespace) -> int:
    from .local.events import handler_for

    if (args.event is None) == (args.tool is None):
        raise UsageError("give an EVENT file or --tool NAME (with --arguments JSON), one of the two")
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
    os.environ["LAMBDA_MCP_APP"] = args.app
    os.environ.setdefault("LAMBDA_MCP_AUTH", "none")
    if args.aws_endpoint:
        from .local.aws import configure

        configure(args.aws_endpoint, args.table)
    with contextlib.redirect_stdout(sys.stderr):  # the function's log lines: stderr; its response: stdout
        handler = _entrypoint(kind)
        if event is None:
            response = _call_tool(handler, args.tool, arguments, args.api, args.protocol_version)
        else:
            response = handler(event, LambdaContext())
    json.dump(response, sys.stdout, indent=2)
    sys.stdout.write("\n")
    return 0


def _entrypoint(kind: str) -> Handler:
    """The Lambda handler of the HTTP function or of the task worker, imported (its cold start) now."""
    if kind == "worker":
        from .local.poller import prepare_queues

        prepare_queues()  # the worker needs a task queue: in memory, unless one is configured
        from .entrypoints import worker

        return worker.handler
    from .entrypoints import http

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


def _call_tool(handler: Handler, tool: str, arguments: dict[str, Any], api: ApiType, version: str) -> Any:
    """`tools/call` through `handler` as the front door `api` would deliver it; on a legacy revision after an
    `initialize` (and `notifications/initialized`) in this process, whose session it then uses."""
    from .local.events import initialize, initialized, request_event, tool_call

    session_id = None
    if revisions.is_legacy(version):
        opened = handler(request_event(api, initialize(version), version), LambdaContext())
        headers = {k.lower(): v for k, v in (opened.get("headers") or {}).items()}
        session_id = headers.get("mcp-session-id")
        if session_id is None:
            raise UsageError(f"initialize opened no session (status {opened.get('statusCode')}): {opened.get('body')}")
        handler(request_event(api, initialized(), version, session_id), LambdaContext())
    return handler(request_event(api, tool_call(tool, arguments, version), version, session_id), LambdaContext())


def _caller(args: argparse.Namespace) -> Caller | None:
    """The emulated authorizer's caller `dev --lambda` was given, if any; UsageError says what is wrong."""
    from .local.gateways import Caller

    if args.authorizer_claims is None and args.iam_caller is None:
        return None
    if not args.through_lambda:
        raise UsageError("--authorizer-claims and --iam-caller emulate API Gateway: add --lambda")
    if args.authorizer_claims is not None and args.iam_caller is not None:
        raise UsageError("give --authorizer-claims or --iam-caller, not both")
    if args.iam_caller is not None:
        if not args.iam_caller.startswith("arn:"):
            raise UsageError(f"--iam-caller must be an IAM ARN (arn:aws:iam::...), not {args.iam_caller!r}")
        return Caller(iam_arn=args.iam_caller)
    if args.api == "url":
        raise UsageError("a Function URL authenticates with IAM only: use --iam-caller (or --api http or rest)")
    try:
        claims = json.loads(args.authorizer_claims.read_text(encoding="utf-8"))
    except OSError as exc:
        raise UsageError(f"cannot read {args.authorizer_claims}: {exc.strerror}") from None
    except ValueError as exc:
        raise UsageError(f"{args.authorizer_claims} is not JSON: {exc}") from None
    if not isinstance(claims, dict):
        raise UsageError(f"{args.authorizer_claims} must hold a JSON object of claims (iss, sub, scope)")
    return Caller(claims=claims)


if __name__ == "__main__":
    raise SystemExit(main())
