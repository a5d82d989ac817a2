"""The `lambda-mcp` console script: `dev` runs an app locally, `invoke` runs one event through the handler,
`new` creates a project, `local-aws` runs the local AWS API on its own."""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from .local.aws import DEFAULT_DATA_DIR  # stdlib-only module

if TYPE_CHECKING:
    from .local.gateways import Caller


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="lambda-mcp", description="Host MCP servers on AWS Lambda.")
    commands = parser.add_subparsers(dest="command", required=True)
    dev = commands.add_parser("dev", help="run an app locally on 127.0.0.1")
    dev.add_argument("target", help="path/to/file.py[:app] or module[:app]")
    dev.add_argument("--host", default="127.0.0.1")
    dev.add_argument("--port", type=int, default=8000)
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
        help="where state lives: in memory (default), or DynamoDB on a local AWS API the kit starts "
        "(DynamoDB Local when Java is present, else moto server)",
    )
    dev.add_argument(
        "--api",
        choices=["http", "rest", "url"],
        default="http",
        help="with --lambda: the front door to emulate: API Gateway HTTP API (default), REST API (stage v1:"
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
    dev.add_argument("--table", help="state table name (default: $LAMBDA_MCP_TABLE_NAME or lambda-mcp-state)")
    invoke = commands.add_parser("invoke", help="run one Lambda event (JSON file) through the HTTP handler")
    invoke.add_argument("event", help="path to an API Gateway / Function URL event JSON file")
    invoke.add_argument("--app", required=True, help="path/to/file.py[:app] or module[:app]")
    invoke.add_argument("--session-id", help="fill the event's REPLACE_WITH_SESSION_ID placeholder")
    invoke.add_argument("--aws-endpoint", metavar="URL", help="keep state in DynamoDB at this local endpoint")
    invoke.add_argument("--table", help="state table name")
    commands.add_parser("local-aws", help="run the local AWS API (DynamoDB Local or moto) in the foreground")
    new = commands.add_parser("new", help="create a project of your own: an app, its tests and its SAM template")
    new.add_argument("name", help="the project's name (its directory, stack name and MCP server name)")
    new.add_argument("--directory", type=Path, default=Path("."), help="where to create it (default: here)")
    if argv is None:
        argv = sys.argv[1:]
    if argv[:1] == ["local-aws"]:
        from .local.aws import main as local_aws

        return local_aws(list(argv[1:]))
    args = parser.parse_args(argv)

    if args.command == "dev":
        from .local.aws import LocalAWSError, prepare

        try:
            caller = _caller(args)
        except ValueError as exc:
            print(f"lambda-mcp dev: {exc}", file=sys.stderr)
            return 2
        try:
            local = prepare(
                args.aws,
                args.aws_endpoint,
                args.data_dir,
                args.table,
                queues=args.through_lambda,
                sqs_endpoint=args.sqs_endpoint,
            )
        except LocalAWSError as exc:
            print(f"lambda-mcp dev: {exc}", file=sys.stderr)
            return 2
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
    if args.command == "new":
        from .scaffold import ScaffoldError, create_project

        try:
            created = create_project(args.name, args.directory)
        except ScaffoldError as exc:
            print(f"lambda-mcp new: {exc}", file=sys.stderr)
            return 1
        print(f"created {created}; next:")
        print(f"  cd {created}")
        print("  lambda-mcp dev app/app.py      # run it locally")
        print("  python -m pytest tests         # its tests")
        print("  sam build && sam deploy --guided")
        return 0
    if args.command == "invoke":
        os.environ["LAMBDA_MCP_APP"] = args.app
        os.environ.setdefault("LAMBDA_MCP_AUTH", "none")
        if args.aws_endpoint:
            from .local.aws import configure

            configure(args.aws_endpoint, args.table)
        from .local.context import LambdaContext

        with open(args.event, encoding="utf-8") as handle:
            text = handle.read()
        if args.session_id:
            text = text.replace("REPLACE_WITH_SESSION_ID", args.session_id)
        event = json.loads(text)
        with contextlib.redirect_stdout(sys.stderr):  # the function's log lines: stderr; its response: stdout
            from .entrypoints.http import handler

            response = handler(event, LambdaContext())
        json.dump(response, sys.stdout, indent=2)
        sys.stdout.write("\n")
        return 0
    return 2


def _caller(args: argparse.Namespace) -> Caller | None:
    """The emulated authorizer's caller `dev --lambda` was given, if any; ValueError says what is wrong."""
    from .local.gateways import Caller

    if args.authorizer_claims is None and args.iam_caller is None:
        return None
    if not args.through_lambda:
        raise ValueError("--authorizer-claims and --iam-caller emulate API Gateway: add --lambda")
    if args.authorizer_claims is not None and args.iam_caller is not None:
        raise ValueError("give --authorizer-claims or --iam-caller, not both")
    if args.iam_caller is not None:
        if not args.iam_caller.startswith("arn:"):
            raise ValueError(f"--iam-caller must be an IAM ARN (arn:aws:iam::...), not {args.iam_caller!r}")
        return Caller(iam_arn=args.iam_caller)
    if args.api == "url":
        raise ValueError("a Function URL authenticates with IAM only: use --iam-caller (or --api http or rest)")
    try:
        claims = json.loads(args.authorizer_claims.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ValueError(f"cannot read {args.authorizer_claims}: {exc.strerror}") from None
    except ValueError as exc:
        raise ValueError(f"{args.authorizer_claims} is not JSON: {exc}") from None
    if not isinstance(claims, dict):
        raise ValueError(f"{args.authorizer_claims} must hold a JSON object of claims (iss, sub, scope)")
    return Caller(claims=claims)


if __name__ == "__main__":
    raise SystemExit(main())
