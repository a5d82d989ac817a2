"""`lambda-mcp connections revoke PRINCIPAL --connection NAME --table T`: an operator ends a user's connection
to another service (`app.connection`): the tokens the facade keeps for them there are deleted from the
deployment's state table, so the user's next call that needs it asks them to connect again.
"""

from __future__ import annotations

import argparse
import asyncio
import sys


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="lambda-mcp connections",
        description="Manage users' connections to other services (app.connection, LAMBDA_MCP_AUTH=proxy).",
    )
    commands = parser.add_subparsers(dest="command", required=True)
    revoke = commands.add_parser(
        "revoke",
        help="delete a user's tokens at one or more connections: their next call asks them to connect again",
    )
    revoke.add_argument("principal", help="the user as tools see them: ctx.principal (<facade issuer>#<subject>)")
    revoke.add_argument(
        "--connection", action="append", required=True, metavar="NAME", help="a connection's name (repeatable)"
    )
    revoke.add_argument("--table", required=True, help="the stack's state table (its StateTableName output)")
    revoke.add_argument("--aws-endpoint", metavar="URL", help="a local DynamoDB endpoint instead of AWS")
    args = parser.parse_args(argv)
    from .facade.connection_vault import ConnectionVault
    from .storage.dynamodb.facade import DynamoDBFacadeStore

    if "#" not in args.principal or "://" not in args.principal:
        print("PRINCIPAL must be ctx.principal: <facade issuer>#<subject>", file=sys.stderr)
        return 2
    if args.aws_endpoint:
        from .local.aws import configure

        configure(args.aws_endpoint, args.table, create=False)
    store = DynamoDBFacadeStore(args.table)

    async def revoke_all() -> None:
        for name in args.connection:
            await store.delete("connection", ConnectionVault.key(args.principal, name))

    asyncio.run(revoke_all())
    names = ", ".join(args.connection)
    print(f"revoked {names} for {args.principal}: their next call asks them to connect again", file=sys.stderr)
    return 0
