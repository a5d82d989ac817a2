"""`lambda-mcp openapi check SPEC`: which tools `app.openapi` would make of an OpenAPI document (name, method
and path, scopes), which operations it would skip and why, and the base URL the calls would go to; with
the same filters as `app.openapi`. Exit 0, or 2 with one line for a document it cannot serve."""

from __future__ import annotations

import argparse
import sys


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="lambda-mcp openapi", description="Check what app.openapi makes of a document."
    )
    actions = parser.add_subparsers(dest="action", required=True)
    check = actions.add_parser("check", help="list the tools a document makes, and what is skipped and why")
    check.add_argument("spec", metavar="SPEC", help="the document: a .json/.yaml/.yml file or an https:// URL")
    check.add_argument("--base-url", metavar="URL", help="where the calls go (default: the document's first server)")
    repeatable = (
        ("--tag", "tags", "T", "keep operations with this tag"),
        ("--exclude-tag", "exclude_tags", "T", "leave out operations with this tag"),
        ("--path", "paths", "P", "keep paths matching this shell pattern (`*` crosses `/`)"),
        ("--exclude-path", "exclude_paths", "P", "leave out paths matching this shell pattern"),
        ("--method", "methods", "M", "keep operations of this HTTP method"),
    )
    for flag, dest, metavar, text in repeatable:
        check.add_argument(flag, dest=dest, metavar=metavar, action="append", default=[], help=f"{text} (repeatable)")
    args = parser.parse_args(argv)
    from .server.errors import DeclarationError
    from .server.openapi.build import openapi_tools
    from .server.openapi.document import SpecError

    try:
        report = openapi_tools(
            args.spec,
            base_url=args.base_url,
            tags=args.tags,
            exclude_tags=args.exclude_tags,
            paths=args.paths,
            exclude_paths=args.exclude_paths,
            methods=args.methods,
        )
    except DeclarationError as exc:
        problem = f"{exc.source}: {exc.problem}" if isinstance(exc, SpecError) else exc.reason
        print(f"lambda-mcp openapi check: {' '.join(problem.split())}", file=sys.stderr)
        return 2
    print(f"base URL: {report.base_url}")
    print(f"tools ({len(report.tools)}):")
    rows = [(t.name, report.operations[t.name], ", ".join(sorted(t.scopes)) or "-") for t in report.tools]
    widths = [max((len(row[i]) for row in rows), default=0) for i in range(2)]
    for name, operation, scopes in rows:
        print(f"  {name:<{widths[0]}}  {operation:<{widths[1]}}  scopes: {scopes}")
    problems = [s for s in report.skipped if not s.filtered]
    print(f"skipped ({len(problems)}):")
    for skipped in problems:
        print(f"  {skipped.operation}: {skipped.reason}")
    left_out = len(report.skipped) - len(problems)
    if left_out:
        print(f"left out by the filters: {left_out} operation{'s' if left_out != 1 else ''}")
    return 0
