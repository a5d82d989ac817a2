"""The `lambda-mcp` console script: `dev` runs an app locally (local/launch.py), `serve` is the production
streaming server (behind the Lambda Web Adapter), `invoke` runs one event through the handler
(local/invoke.py), `new` creates a project, `local-aws` runs the local AWS API on its own; `call`, `list`,
`read` and `prompt` talk to any MCP endpoint (lambda_mcp.remote), `smoke` checks a deployed endpoint,
`check` checks a deploy's parameters before upload, `signout` signs a user out of the authorization
facade, `clients` edits the facade's operator clients (its machine clients), `connections revoke` ends a
user's connection to another service, `openapi check` shows the tools an OpenAPI document makes. Expected
failures are one line on stderr (`lambda-mcp --debug ...`: the traceback)."""

from __future__ import annotations

import argparse
import importlib
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .local import invoke, launch  # stdlib-only at import
from .local.usage import UsageError, port_number

DEBUG = "--debug"
EXPECTED = {
    "lambda_mcp.local.usage.UsageError": 2,
    "lambda_mcp.loader.AppLoadError": 2,
    "lambda_mcp.env_reader.ConfigError": 2,  # (lambda_mcp.config.ConfigError)
    "lambda_mcp.local.aws.LocalAWSError": 2,
    "lambda_mcp.storage.errors.StorageError": 2,
    "lambda_mcp.scaffold.ScaffoldError": 1,
    "lambda_mcp.clients_document.ClientsError": 2,
    "json.decoder.JSONDecodeError": 2,
    "builtins.OSError": 2,
}
"""The exceptions a command's expected failures raise (and their subclasses), each with its exit status:
one line on stderr, no traceback."""
OWN_PARSERS = {
    "check": ".check",
    "local-aws": ".local.aws",
    "signout": ".signout",
    "clients": ".clients_cli",
    "connections": ".connections_cli",
    "export": ".export_cli",
    "openapi": ".openapi_cli",
    "smoke": ".smoke",
    "call": ".remote.cli",
    "list": ".remote.cli",
    "read": ".remote.cli",
    "prompt": ".remote.cli",
}
"""Commands with parsers of their own: the module whose `main` takes the rest of the command line (the
remote client's takes the command name too)."""
__all__ = ["UsageError", "main"]


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
    launch.add_parser(commands, formatter)
    serve = commands.add_parser("serve", help="the streaming server (behind the Lambda Web Adapter)")
    serve.add_argument("target", help="path/to/file.py[:app] or module[:app]; settings: LAMBDA_MCP_* as in Lambda")
    serve.add_argument("--host", help="address to listen on (default: $AWS_LWA_HOST or 127.0.0.1)")
    serve.add_argument("--port", help="port to listen on, 1-65535 (default: $AWS_LWA_PORT, $PORT or 8080)")
    serve.add_argument(
        "--agentcore",
        action="store_true",
        help="the Amazon Bedrock AgentCore Runtime contract: 0.0.0.0:8000/mcp, stateless, GET /ping",
    )
    invoke.add_parser(commands, formatter)
    commands.add_parser(
        "signout", help="sign a user out of the authorization facade everywhere (lambda-mcp signout -h)"
    )
    commands.add_parser(
        "clients", help="add, list or remove the facade's operator clients: agents, CI jobs (lambda-mcp clients -h)"
    )
    commands.add_parser("connections", help="revoke a user's connections to other services (lambda-mcp connections -h)")
    commands.add_parser(
        "export", help="write the app's tools for AgentCore Gateway: lambda-mcp export agentcore APP (-h)"
    )
    commands.add_parser(
        "check", help="check the parameters sam deploy would send, before any upload (lambda-mcp check -h)"
    )
    commands.add_parser("openapi", help="the tools app.openapi makes of a document: lambda-mcp openapi check SPEC (-h)")
    commands.add_parser("local-aws", help="run the local AWS API (DynamoDB Local or moto) in the foreground")
    commands.add_parser("call", help="call a tool on any MCP endpoint, either era (lambda-mcp call --help)")
    commands.add_parser("list", help="list an MCP endpoint's tools, resources or prompts (lambda-mcp list --help)")
    commands.add_parser("read", help="read a resource of any MCP endpoint, either era (lambda-mcp read --help)")
    commands.add_parser("prompt", help="get a prompt from any MCP endpoint, either era (lambda-mcp prompt --help)")
    commands.add_parser("smoke", help="smoke-test a deployed endpoint on both MCP eras (lambda-mcp smoke --help)")
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
    new.add_argument(
        "--target",
        choices=("lambda", "agentcore"),
        default="lambda",
        help="agentcore: also an arm64 Dockerfile and AGENTCORE.md for Amazon Bedrock AgentCore Runtime",
    )
    return parser


def _run(argv: list[str]) -> int:
    own = OWN_PARSERS.get(argv[0]) if argv else None
    if own is not None:  # commands with parsers of their own
        module = importlib.import_module(own, __package__)
        return int(module.main(list(argv) if own == ".remote.cli" else list(argv[1:])))
    args = _parser().parse_args(argv)
    if args.command in ("dev", "invoke", "serve") and os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())  # module targets from the current directory, as `python -m` does
    if args.command == "dev":
        return launch.run(args)
    if args.command == "invoke":
        return invoke.run(args)
    if args.command == "serve":
        return _serve(args)
    if args.command == "new":
        return _new(args)
    return 2


def _serve(args: argparse.Namespace) -> int:
    if args.agentcore:
        from .agentcore_runtime import serve_runtime

        serve_runtime(args.target, args.host, port_number(args.port))
        return 0
    from .serving import serve

    serve(args.target, args.host, port_number(args.port))
    return 0


def _new(args: argparse.Namespace) -> int:
    from .scaffold import create_project, next_steps

    created = create_project(args.name, args.directory, args.kit_wheel, agentcore=args.target == "agentcore")
    print(next_steps(created))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
