"""The `lambda-mcp` console script: `dev` runs an app locally, `invoke` runs one event through the handler."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence


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
    invoke = commands.add_parser("invoke", help="run one Lambda event (JSON file) through the HTTP handler")
    invoke.add_argument("event", help="path to an API Gateway / Function URL event JSON file")
    invoke.add_argument("--app", required=True, help="path/to/file.py[:app] or module[:app]")
    args = parser.parse_args(argv)

    if args.command == "dev":
        if args.through_lambda:
            from .local.apigw import serve as serve_lambda

            serve_lambda(args.target, args.host, args.port)
        else:
            from .local.dev import serve

            serve(args.target, args.host, args.port)
        return 0
    if args.command == "invoke":
        os.environ["LAMBDA_MCP_APP"] = args.app
        from .local.apigw import LambdaContext

        with open(args.event, encoding="utf-8") as handle:
            event = json.load(handle)
        from .entrypoints.http import handler

        json.dump(handler(event, LambdaContext()), sys.stdout, indent=2)
        sys.stdout.write("\n")
        return 0
    return 2


if __name__ == "__main__":
    raise SystemExit(main())
