"""What each command does with an open session: `call` a tool, `list` what the server offers, `read` a
resource, get a `prompt`; each prints its result on stdout and returns the exit status.

A tool call carries a progress token, so the server's progress notifications come back and are shown on
stderr with its log messages while the tool runs. A server without the capability asked for is "this
server offers no resources" (and so on): an empty list for `list` (exit 0), an error for the others.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from .arguments import json_object, pairs, typed
from .failures import ERROR_RESULT, RemoteFailure, RpcError, absent, one_line
from .output import LIST_KEYS, call_text, contents_text, entry_line, prompt_text
from .session import Session, entries, find

PROGRESS_TOKEN = "lambda-mcp-cli"


def _show(args: argparse.Namespace, result: dict[str, Any], text: str) -> None:
    print(json.dumps(result, indent=2, ensure_ascii=False) if args.json else text)


def _offered(method: str, exc: RpcError) -> RemoteFailure:
    """The failure to report for `exc`: "this server offers no ..." when the method does not exist."""
    said = absent(method, exc)
    return RemoteFailure(said, ERROR_RESULT) if said else exc


def call(session: Session, args: argparse.Namespace) -> int:
    arguments = json_object(args.arguments) if args.arguments is not None else {}
    given = pairs(args.params)
    if given:
        try:
            tool = find(session, "tools/list", "tools", args.tool)
        except RpcError as exc:
            raise _offered("tools/list", exc) from None
        if tool is None:
            raise RemoteFailure(
                f"this server has no tool {args.tool!r} (lambda-mcp list shows its tools)", ERROR_RESULT
            )
        arguments |= typed(args.tool, tool.get("inputSchema"), given)
    params = {"name": args.tool, "arguments": arguments, "_meta": {"progressToken": PROGRESS_TOKEN}}
    result = session.call_tool(params)
    failed = bool(result.get("isError"))
    if args.json:
        _show(args, result, "")
    elif failed:
        print(f"error: {one_line(call_text(result)) or 'the tool failed'}", file=sys.stderr)
    else:
        print(call_text(result))
    return ERROR_RESULT if failed else 0


def listing(session: Session, args: argparse.Namespace) -> int:
    method, key = LIST_KEYS[args.kind]
    try:
        found = list(entries(session, method, key))
    except RpcError as exc:
        said = absent(method, exc)
        if said is None:
            raise
        print(said, file=sys.stderr)
        found = []
    if args.json:
        print(json.dumps({key: found}, indent=2, ensure_ascii=False))
    else:
        for entry in found:
            print(entry_line(args.kind, entry))
    return 0


def read(session: Session, args: argparse.Namespace) -> int:
    try:
        result = session.request("resources/read", {"uri": args.uri})
    except RpcError as exc:
        raise _offered("resources/read", exc) from None
    _show(args, result, contents_text(result))
    return 0


def prompt(session: Session, args: argparse.Namespace) -> int:
    given = pairs(args.params)
    if given:
        try:
            listed = find(session, "prompts/list", "prompts", args.name)
        except RpcError as exc:
            raise _offered("prompts/list", exc) from None
        if listed is None:
            raise RemoteFailure(f"this server has no prompt {args.name!r} (lambda-mcp list URL prompts)", ERROR_RESULT)
        taken = [str(a.get("name")) for a in listed.get("arguments") or [] if isinstance(a, dict)]
        for key, _ in given:
            if key not in taken:
                wanted = ", ".join(taken) or "no arguments"
                raise RemoteFailure(f"the prompt {args.name} takes no argument {key!r} (it takes: {wanted})")
    try:
        result = session.request("prompts/get", {"name": args.name, "arguments": dict(given)})
    except RpcError as exc:
        raise _offered("prompts/get", exc) from None
    _show(args, result, prompt_text(result))
    return 0


COMMANDS = {"call": call, "list": listing, "read": read, "prompt": prompt}
