"""`lambda-mcp call URL TOOL [key=value ...]`, `lambda-mcp list URL [KIND]`, `lambda-mcp read URL URI` and
`lambda-mcp prompt URL NAME [key=value ...]`: parse the command line, open a session in the chosen era
(with `--login`, a token first: `login`), run the command (`commands`); every failure is one line on
stderr and an exit status (0 done, 1 an error result or a JSON-RPC error, 2 a usage, connection or HTTP
failure)."""

from __future__ import annotations

import argparse
import os
import sys
import traceback
from typing import NoReturn

from ..protocol.names import LOG_LEVELS
from ..protocol.revisions import LEGACY, MODERN
from .failures import USAGE, RemoteFailure, Unauthorized, one_line
from .session import Session

EXAMPLES = """examples:
  lambda-mcp list http://127.0.0.1:8000/mcp
  lambda-mcp call http://127.0.0.1:8000/mcp search query=lambda limit=5
  lambda-mcp call http://127.0.0.1:8000/mcp add --arguments '{"a": 1, "b": 2}'
  lambda-mcp read http://127.0.0.1:8000/mcp file:///notes/today.md
  lambda-mcp prompt http://127.0.0.1:8000/mcp summarize topic=tides
  lambda-mcp call https://abc123.execute-api.eu-west-1.amazonaws.com/v1/mcp whoami --sigv4
  lambda-mcp list https://mcp.example.com/mcp prompts --login --protocol-version 2025-11-25
"""
WHAT = {
    "call": "Call a tool on",
    "list": "List the tools, resources, resource templates or prompts of",
    "read": "Read a resource of",
    "prompt": "Get a prompt from",
}
COMMANDS = tuple(WHAT)


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        """Usage mistakes on one line (argparse prints the whole usage first)."""
        self.exit(USAGE, f"{self.prog}: {message} (see {self.prog} --help)\n")


def _parser(command: str) -> argparse.ArgumentParser:
    parser = _Parser(
        prog=f"lambda-mcp {command}",
        description=f"{WHAT[command]} any Streamable HTTP MCP endpoint, in either protocol era.",
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("url", metavar="URL", help="the MCP endpoint, e.g. http://127.0.0.1:8000/mcp")
    if command == "call":
        parser.add_argument("tool", metavar="TOOL", help="the tool's name")
        parser.add_argument(
            "params", nargs="*", metavar="KEY=VALUE", help="an argument, typed by the tool's input schema"
        )
        parser.add_argument(
            "--arguments", "-a", metavar="JSON", help="the arguments as a JSON object (@FILE reads one)"
        )
    elif command == "prompt":
        parser.add_argument("name", metavar="NAME", help="the prompt's name")
        parser.add_argument("params", nargs="*", metavar="KEY=VALUE", help="an argument of the prompt")
    elif command == "read":
        parser.add_argument("uri", metavar="URI", help="the resource's URI (a template's, filled in)")
    else:
        parser.add_argument("kind", nargs="?", default="tools", choices=["tools", "resources", "templates", "prompts"])
    parser.add_argument(
        "--protocol-version",
        default=MODERN,
        choices=[MODERN, *LEGACY],
        help=f"the MCP revision (default: {MODERN}, stateless; the others open an initialize session)",
    )
    if command != "list":
        parser.add_argument(
            "--log-level",
            default="info",
            choices=LOG_LEVELS,
            help="show the server's log messages at this level and above on stderr (default: info)",
        )
    parser.add_argument("--bearer", metavar="TOKEN", help="send Authorization: Bearer TOKEN")
    parser.add_argument(
        "--login",
        action="store_true",
        help="sign in with a browser (OAuth) when the server asks; the token is saved and refreshed",
    )
    parser.add_argument(
        "--client-metadata",
        metavar="URL",
        help="with --login: the https URL of your client ID metadata document, instead of registering",
    )
    parser.add_argument(
        "--header", "-H", action="append", default=[], metavar="'NAME: VALUE'", help="an extra header (repeatable)"
    )
    parser.add_argument("--sigv4", action="store_true", help="sign each request with AWS SigV4 (IAM auth)")
    parser.add_argument("--region", help="with --sigv4: the region (default: from the host name, else AWS_REGION)")
    parser.add_argument(
        "--service",
        choices=["execute-api", "lambda"],
        help="with --sigv4: the signing service (default: lambda for *.lambda-url.* hosts, else execute-api)",
    )
    parser.add_argument("--json", action="store_true", help="print the raw result as JSON")
    parser.add_argument("--timeout", type=float, default=60.0, metavar="SECONDS", help="per read (default: 60)")
    parser.add_argument("--debug", action="store_true", help="show a traceback on unexpected failures")
    return parser


def _headers(args: argparse.Namespace) -> dict[str, str]:
    headers: dict[str, str] = {}
    for given in args.header:
        name, colon, value = given.partition(":")
        if not colon or not name.strip() or any(c.isspace() for c in name.strip()):
            raise RemoteFailure(f"--header {given!r} is not 'Name: value'")
        headers[name.strip().lower()] = value.strip()
    chosen = [name for name, on in (("--bearer", args.bearer), ("--sigv4", args.sigv4), ("--login", args.login)) if on]
    if len(chosen) > 1:
        raise RemoteFailure(f"{' and '.join(chosen)} each set the Authorization header: choose one")
    if args.client_metadata and not args.login:
        raise RemoteFailure("--client-metadata goes with --login")
    if args.bearer:
        headers["authorization"] = f"Bearer {args.bearer}"
    return headers


def _open(args: argparse.Namespace, headers: dict[str, str]) -> Session:
    """The session for `args` (closing it closes its connections)."""
    from .answers import Answerer
    from .legacy import LegacySession
    from .modern import ModernSession
    from .output import Notices
    from .prompt import Prompter
    from .wire import Wire

    signer = None
    if args.sigv4:
        from .sigv4 import SigV4Signer, default_service, region_for

        signer = SigV4Signer(region_for(args.url, args.region), args.service or default_service(args.url))
    wire = Wire(args.url, headers=headers, signer=signer, timeout=args.timeout)
    answerer, notify = Answerer(Prompter(sys.stdin, sys.stderr)), Notices(sys.stderr)
    log_level = getattr(args, "log_level", None)
    try:
        if args.protocol_version == MODERN:
            return ModernSession(wire, answerer, notify, log_level=log_level)
        return LegacySession(wire, answerer, notify, args.protocol_version, log_level)
    except BaseException:
        wire.close()
        raise


def _once(command: str, args: argparse.Namespace, headers: dict[str, str]) -> int:
    from .commands import COMMANDS

    session = _open(args, headers)
    try:
        return COMMANDS[command](session, args)
    finally:
        session.close()


def _run(command: str, args: argparse.Namespace) -> int:
    if not args.url.startswith(("http://", "https://")):
        raise RemoteFailure(f"{args.url!r} is not an http(s) URL")
    try:
        import httpx  # noqa: F401
    except ImportError:
        raise RemoteFailure(f"lambda-mcp {command} needs httpx: pip install httpx") from None
    headers = _headers(args)
    if not args.login:
        return _once(command, args, headers)
    from .login import Login

    login = Login(args.url, client_metadata=args.client_metadata, timeout=args.timeout)
    token = login.saved()
    for _ in range(3):  # the saved token, a refreshed one, a new sign-in
        try:
            return _once(command, args, {**headers, **({"authorization": f"Bearer {token}"} if token else {})})
        except Unauthorized as refused:
            if login.signed_in:
                raise
            token = login.renewed(refused.challenge)
    raise RemoteFailure("--login: the server refused every token")


def main(argv: list[str]) -> int:
    """`argv[0]` is `call`, `list`, `read` or `prompt`; the rest are its arguments."""
    command = argv[0]
    args = _parser(command).parse_intermixed_args(argv[1:])
    prog = f"lambda-mcp {command}"
    try:
        return _run(command, args)
    except RemoteFailure as exc:
        print(f"{prog}: {one_line(str(exc))}", file=sys.stderr)
        return exc.status
    except BrokenPipeError:  # `lambda-mcp list URL | head`: the reader has what it wanted
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except KeyboardInterrupt:
        print(f"{prog}: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:
        if args.debug:
            traceback.print_exc()
        print(
            f"{prog}: unexpected failure: {one_line(str(exc)) or type(exc).__name__}"
            + ("" if args.debug else " (--debug shows the traceback)"),
            file=sys.stderr,
        )
        return USAGE


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
