"""Separate OS processes running the Lambda handler on one DynamoDB table (Amazon DynamoDB Local over the wire).

Each `lambda-mcp invoke` is a fresh process: a cold start of the real handler fed an event from
events/, exactly like a separate Lambda execution environment. Sessions, their deletion and
their binding to the JWT principal must hold across them.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import boto3

from lambda_mcp.storage.dynamodb import create_table
from tests.support.processes import ROOT

APP = "examples/conformance/server.py"
EVENTS = ROOT / "events/http-api-v2-jwt"


def _invoke(endpoint: str, table: str, event: str, session_id: str | None = None) -> dict[str, Any]:
    args = [sys.executable, "-m", "lambda_mcp.cli", "invoke", str(EVENTS / event), "--app", APP]
    args += ["--aws-endpoint", endpoint, "--table", table]
    if session_id:
        args += ["--session-id", session_id]
    env = {**os.environ, "LAMBDA_MCP_STATE_KEY": "shared-by-every-instance", "LAMBDA_MCP_AUTH": "gateway"}
    done = subprocess.run(args, capture_output=True, text=True, timeout=60, cwd=ROOT, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def _body(result: dict[str, Any]) -> dict[str, Any]:
    text = result["body"]
    if "text/event-stream" in result["headers"].get("content-type", ""):
        text = [line[5:] for line in text.splitlines() if line.startswith("data:") and line[5:].strip()][-1]
    body: dict[str, Any] = json.loads(text)
    return body


def test_sessions_cross_processes_and_stay_bound_to_their_principal(dynamodb_local_url: str, tmp_path: Path) -> None:
    table = "separate-processes"
    create_table(boto3.client("dynamodb", region_name="us-east-1", endpoint_url=dynamodb_local_url), table)

    started = _invoke(dynamodb_local_url, table, "initialize.json")  # process 1: alice initializes
    assert started["statusCode"] == 200, started
    session_id = started["headers"]["mcp-session-id"]

    served = _invoke(dynamodb_local_url, table, "legacy_tools_call.json", session_id)  # process 2: alice calls
    assert served["statusCode"] == 200, served
    assert _body(served)["result"]["content"][0]["text"]

    stranger = _invoke(dynamodb_local_url, table, "legacy_tools_call_other_principal.json", session_id)  # 3: bob
    assert stranger["statusCode"] == 404, stranger
    assert "Session not found" in _body(stranger)["error"]["message"]

    ended = _invoke(dynamodb_local_url, table, "delete_session.json", session_id)  # process 4: alice deletes
    assert ended["statusCode"] == 200, ended

    after = _invoke(dynamodb_local_url, table, "legacy_tools_call.json", session_id)  # process 5: gone everywhere
    assert after["statusCode"] == 404, after
