"""`lambda-mcp connections revoke --subject S [--connection N] --table T`: an operator ends a user's
connections to other services (`app.connection`): the tokens the facade keeps for them are deleted from the
deployment's state table, so the user's next call that needs one asks them to connect again.

`S` is the user as tools see them (`ctx.principal`, `<facade issuer>#<subject>`), or their subject with
`--issuer` (the MCP URL without `/mcp`). Without `--connection`, every connection the app declares
(`--app`, default `$LAMBDA_MCP_APP`) is revoked.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="lambda-mcp connections",
        description="Manage users' connections to other services (app.connection, LAMBDA_MCP_AUTH=proxy).",
    )
    commands = parser.add_subparsers(dest="command", required=True)
    revoke = commands.add_parser(
        "revoke", help="delete a user's tokens at other services: their next call asks them to connect again"
    )
    revoke.add_argument(
        "--subject", required=True, help="ctx.principal (<facade issuer>#<subject>), or the subject with --issuer"
    )
    revoke.add_argument("--issuer", help="the facade's issuer: the MCP URL without /mcp (with a bare subject)")
    revoke.add_argument("--connection", action="append", metavar="NAME", help="a connection (repeatable; default: all)")
    revoke.add_argument("--app", help="the app, to list its connections (default: $LAMBDA_MCP_APP)")
    revoke.add_argument("--table", required=True, help="the stack's state table (its StateTableName output)")
    revoke.add_argument("--aws-endpoint", metavar="URL", help="a local DynamoDB endpoint instead of AWS")
    args = parser.parse_args(argv)
    principal = args.subject
    if "://" not in principal or "#" not in principal:
        if not args.issuer:
            print("--subject is a bare subject: give --issuer (the MCP URL without /mcp) too", file=sys.stderr)
            return 2
        principal = f"{args.issuer.rstrip('/')}#{args.subject}"
    names = args.connection
    if not names:
        target = args.app or os.environ.get("LAMBDA_MCP_APP")
        if not target:
            print("name the connections (--connection) or the app that declares them (--app)", file=sys.stderr)
            return 2
        from .loader import load_app

        names = sorted(load_app(target).connections)
    from .facade.connection_vault import ConnectionVault
    from .storage.dynamodb.facade import DynamoDBFacadeStore

    if args.aws_endpoint:
        from .local.aws import configure

        configure(args.aws_endpoint, args.table, create=False)
    store = DynamoDBFacadeStore(args.table)

    async def revoke_all() -> None:
        for name in names:
            await store.delete("connection", ConnectionVault.key(principal, name))

    asyncio.run(revoke_all())
    print(f"revoked {', '.join(names) or 'nothing'} for {principal}: the next call asks again", file=sys.stderr)
    return 0
