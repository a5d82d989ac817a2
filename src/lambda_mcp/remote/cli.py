"""`lambda-mcp call URL TOOL` and `lambda-mcp list URL [KIND]`: parse the command line, open a session
in the chosen era, print the result; every failure is one line on stderr and an exit status (0 done,
1 an error result or a JSON-RPC error, 2 a usage, connection or HTTP failure)."""

from __future__ import annotations

import argparse
import json
import os
import sys
import traceback
from pathlib import Path
from typing import Any, NoReturn

from ..protocol.revisions import LEGACY, MODERN
from .failures import ERROR_RESULT, USAGE, RemoteFailure, one_line
from .session import Session

EXAMPLES = """examples:
  lambda-mcp list http://127.0.0.1:8000/mcp
  lambda-mcp call http://127.0.0.1:8000/mcp add --arguments '{"a": 1, "b": 2}'
  lambda-mcp call https://abc123.execute-api.eu-west-1.amazonaws.com/mcp whoami --sigv4
  lambda-mcp list https://mcp.example.com/mcp prompts --bearer "$TOKEN" --protocol-version 2025-11-25
"""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        """Usage mistakes on one line (argparse prints the whole usage first)."""
        self.exit(USAGE, f"{self.prog}: {message} (see {self.prog} --help)\n")


def _parser(command: str) -> argparse.ArgumentParser:
    what = "call a tool on" if command == "call" else "list the tools, resources or prompts of"
    parser = _Parser(
        prog=f"lambda-mcp {command}",
        description=f"{what.capitalize()} any Streamable HTTP MCP endpoint, in either protocol era.",
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("url", metavar="URL", help="the MCP endpoint, e.g. http://127.0.0.1:8000/mcp")
    if command == "call":
        parser.add_argument("tool", metavar="TOOL", help="the tool's name")
        parser.add_argument(
            "--arguments", "-a", metavar="JSON", default="{}", help="the arguments, a JSON object (@FILE reads one)"
        )
    else:
        parser.add_argument("kind", nargs="?", default="tools", choices=["tools", "resources", "templates", "prompts"])
    parser.add_argument(
        "--protocol-version",
        default=MODERN,
        choices=[MODERN, *LEGACY],
        help=f"the MCP revision (default: {MODERN}, stateless; the others open an initialize session)",
    )
    parser.add_argument("--bearer", metavar="TOKEN", help="send Authorization: Bearer TOKEN")
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


def _arguments(text: str) -> dict[str, Any]:
    if text.startswith("@"):
        try:
            text = Path(text[1:]).read_text()
        except OSError as exc:
            raise RemoteFailure(f"--arguments: cannot read {text[1:]}: {exc.strerror}") from None
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise RemoteFailure(f'--arguments is not JSON ({exc}); write e.g. \'{{"city": "Paris"}}\'') from None
    if not isinstance(value, dict):
        raise RemoteFailure('--arguments must be a JSON object, e.g. \'{"city": "Paris"}\'')
    return value


def _headers(args: argparse.Namespace) -> dict[str, str]:
    headers: dict[str, str] = {}
    for given in args.header:
        name, colon, value = given.partition(":")
        if not colon or not name.strip() or any(c.isspace() for c in name.strip()):
            raise RemoteFailure(f"--header {given!r} is not 'Name: value'")
        headers[name.strip().lower()] = value.strip()
    if args.bearer:
        if args.sigv4:
            raise RemoteFailure("--bearer and --sigv4 both need the Authorization header: choose one")
        headers["authorization"] = f"Bearer {args.bearer}"
    return headers


def _open(args: argparse.Namespace) -> Session:
    """The session for `args` (closing it closes its connections)."""
    if not args.url.startswith(("http://", "https://")):
        raise RemoteFailure(f"{args.url!r} is not an http(s) URL")
    try:
        import httpx  # noqa: F401
    except ImportError:
        raise RemoteFailure("lambda-mcp call needs httpx: pip install httpx") from None
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
    wire = Wire(args.url, headers=_headers(args), signer=signer, timeout=args.timeout)
    answerer, notify = Answerer(Prompter(sys.stdin, sys.stderr)), Notices(sys.stderr)
    try:
        if args.protocol_version == MODERN:
            return ModernSession(wire, answerer, notify)
        return LegacySession(wire, answerer, notify, args.protocol_version)
    except BaseException:
        wire.close()
        raise


def _run(command: str, args: argparse.Namespace) -> int:
    from .output import LIST_KEYS, call_text, entry_line

    arguments = _arguments(args.arguments) if command == "call" else {}
    session = _open(args)
    try:
        if command == "call":
            result = session.call_tool({"name": args.tool, "arguments": arguments})
            failed = bool(result.get("isError"))
            if args.json:
                print(json.dumps(result, indent=2, ensure_ascii=False))
            elif failed:
                print(f"error: {one_line(call_text(result)) or 'the tool failed'}", file=sys.stderr)
            else:
                print(call_text(result))
            return ERROR_RESULT if failed else 0
        method, key = LIST_KEYS[args.kind]
        entries: list[dict[str, Any]] = []
        cursor: str | None = None
        seen: set[str] = set()
        while True:
            page = session.request(method, {"cursor": cursor} if cursor else {})
            entries += [entry for entry in page.get(key) or [] if isinstance(entry, dict)]
            cursor = page.get("nextCursor")
            if not cursor:
                break
            if cursor in seen:
                raise RemoteFailure(f"the server gave the same nextCursor twice while listing {args.kind}")
            seen.add(cursor)
        if args.json:
            print(json.dumps({key: entries}, indent=2, ensure_ascii=False))
        else:
            for entry in entries:
                print(entry_line(args.kind, entry))
        return 0
    finally:
        session.close()


def main(argv: list[str]) -> int:
    """`argv[0]` is `call` or `list`; the rest are its arguments."""
    command = argv[0]
    args = _parser(command).parse_args(argv[1:])
    prog = f"lambda-mcp {command}"
    try:
        return _run(command, args)
    except RemoteFailure as exc:
        print(f"{prog}: {exc}", file=sys.stderr)
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
