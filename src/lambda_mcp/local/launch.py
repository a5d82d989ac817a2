"""`lambda-mcp dev`: its options, and from them to a running dev server (streaming, or `--lambda` through
the real handlers), with its local AWS API, its sign-in settings and, with `--reload`, its reloader.

Everything a user can get wrong is checked before anything starts, each as one line: the port, the
caller of an emulated authorizer, the auth settings (with `proxy`, what `dev` fills in itself:
local/signin.py), then the address it listens on.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import signal
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .aws import DEFAULT_DATA_DIR  # stdlib-only module
from .gateways import API_TYPES, REST_STAGE
from .usage import UsageError, port_number, project_app

if TYPE_CHECKING:
    from .gateways import Caller


def add_parser(commands: Any, formatter: type[argparse.HelpFormatter]) -> None:
    dev = commands.add_parser("dev", help="run an app locally on 127.0.0.1", formatter_class=formatter)
    dev.add_argument(
        "target",
        nargs="?",
        help="path/to/file.py[:app] or module[:app] (from the current directory; in a project made by"
        " `lambda-mcp new`: app/app.py when not given)",
    )
    dev.add_argument("--host", default="127.0.0.1", help="address to listen on")
    dev.add_argument("--port", default=8000, help="port to listen on (1-65535)")
    dev.add_argument(
        "--lambda",
        dest="through_lambda",
        action="store_true",
        help="serve through the real Lambda handler with API Gateway v2 events (buffered, as in production)",
    )
    dev.add_argument(
        "--reload",
        action="store_true",
        help="restart the server when a .py file under the app's directory changes (also with --lambda)",
    )
    dev.add_argument(
        "--json-logs",
        action="store_true",
        help="with --lambda: each request's JSON log line, as CloudWatch gets it, instead of the readable line",
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
    dev.add_argument(
        "--task-backend",
        choices=("sqs", "durable"),
        default="sqs",
        help="with --lambda: run tasks on the SQS worker (the default) or as Lambda durable executions, through"
        " the durable execution SDK's local runner and the durable worker's handler (template's TaskBackend)",
    )
    dev.add_argument(
        "--real-waits",
        action="store_true",
        help="keep the waits of ctx.sleep (by default they are skipped: a sleeping task runs again at once)",
    )
    dev.add_argument("--data-dir", type=Path, default=DEFAULT_DATA_DIR, help="DynamoDB Local data")
    dev.add_argument(
        "--table", help="state table name (default when unset: $LAMBDA_MCP_TABLE_NAME or lambda-mcp-state)"
    )


def run(args: argparse.Namespace) -> int:
    from . import signin
    from .aws import prepare
    from .dev import listen

    target = project_app(args.target, "TARGET")
    port = port_number(args.port)
    assert port is not None
    if args.json_logs and not args.through_lambda:
        raise UsageError("--json-logs prints the Lambda handler's JSON lines: add --lambda")
    caller = _caller(args)
    if args.task_backend == "durable" and not args.through_lambda:
        raise UsageError("--task-backend durable runs the durable worker's Lambda handler: add --lambda")
    if args.task_backend == "durable":  # read by apigw.serve (and --reload's children)
        os.environ["LAMBDA_MCP_TASK_BACKEND"] = "durable"
    # time skipping (config.py `skip_waits`), for the servers and workers this starts (and --reload's children)
    os.environ["LAMBDA_MCP_SKIP_WAITS"] = "false" if args.real_waits else "true"
    path = f"/{REST_STAGE}/mcp" if args.through_lambda and args.api == "rest" else "/mcp"
    signin.prepare(args.host, port, path)  # LAMBDA_MCP_AUTH=proxy: what it lacks, for this run
    if args.reload:
        _check(target, caller)  # in the reloader's process too: a mistake is one line, before any child
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
        sock = listen(args.host, port)
        serve: functools.partial[None]
        if args.through_lambda:
            from . import apigw

            front = (target, args.host, port, args.api, caller)
            if args.reload:
                serve = functools.partial(apigw.serve_reloaded, *front, args.json_logs)
            else:
                serve = functools.partial(apigw.serve, *front, json_logs=args.json_logs)
        else:
            from . import dev

            serve = functools.partial(dev.serve_reloaded if args.reload else dev.serve, target, args.host, port)
        if args.reload:
            from .reload import run as reloading
            from .reload import watched

            reloading(serve, sock, watched(target))
        else:
            serve(sockets=[sock])
    finally:
        if local is not None:
            local.stop()
    return 0


def _check(target: str, caller: Caller | None) -> None:
    """Load the app and read the settings as the server will (`AppLoadError`, `ConfigError`)."""
    from ..config import Settings
    from ..loader import load_app

    Settings.from_env(default_auth="gateway" if caller is not None else "none")
    load_app(target)


def _caller(args: argparse.Namespace) -> Caller | None:
    """The emulated authorizer's caller `dev --lambda` was given, if any; UsageError says what is wrong."""
    from .gateways import Caller

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
