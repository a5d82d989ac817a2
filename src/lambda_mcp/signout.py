"""`lambda-mcp signout SUBJECT --table NAME`: an operator signs a user out of the authorization facade
everywhere (`LAMBDA_MCP_AUTH=proxy`).

It writes one row to the deployment's state table (`facade.families.sign_out`): every sign-in of the
user that started before now ends at its next refresh, so within the hour that the last access token
issued to it lives, and no consent the user gave before now is remembered.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time


def main(argv: list[str]) -> int:
    signout = argparse.ArgumentParser(
        prog="lambda-mcp signout",
        description="Sign a user out of the authorization facade (LAMBDA_MCP_AUTH=proxy) everywhere: every sign-in"
        " of SUBJECT that started before now ends at its next refresh (within the hour its last access token"
        " lives), and no consent SUBJECT gave before now is remembered. It writes to the deployment's state table"
        " with your AWS credentials.",
    )
    signout.add_argument(
        "subject", help="the user's subject at the identity provider (`sub`), or ctx.principal (`<issuer>#<sub>`)"
    )
    signout.add_argument("--table", required=True, help="the stack's state table (its StateTableName output)")
    signout.add_argument("--aws-endpoint", metavar="URL", help="a local DynamoDB endpoint instead of AWS")
    args = signout.parse_args(argv)
    from .facade.families import sign_out
    from .storage.dynamodb.facade import DynamoDBFacadeStore

    if args.aws_endpoint:
        from .local.aws import configure

        configure(args.aws_endpoint, args.table, create=False)
    subject = args.subject.partition("#")[2] if "://" in args.subject else args.subject  # a principal: <iss>#<sub>
    asyncio.run(sign_out(DynamoDBFacadeStore(args.table), subject, time.time()))
    print(f"signed out {subject} everywhere: their sign-ins end at their next refresh", file=sys.stderr)
    return 0
