"""A plain tool is served cold without pydantic or the AWS SDK: the HTTP entrypoint's import and its first
2026 `tools/call` load none of them, with no state configured and in the deployed shape, whose state is
in DynamoDB, its tasks on SQS and its requestState key in Secrets Manager (a call that needs none of them
loads none of botocore's client machinery).

What the cold path costs is measured elsewhere: its instruction budgets against a floor in
tests/integration/test_instruction_budgets.py (callgrind: counts that the machine's load does not move),
and its wall time against the official SDK by bench/run.py.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.support.processes import ROOT

DEPLOYED = {  # as template.yaml configures the HTTP function; nothing listens there: no call may be made
    "LAMBDA_MCP_TABLE_NAME": "cold-state",
    "LAMBDA_MCP_TASK_QUEUE_URL": "http://127.0.0.1:9/000000000000/cold-tasks",
    "LAMBDA_MCP_STATE_KEY_SECRET": "arn:aws:secretsmanager:us-east-1:000000000000:secret:cold-key",
    "AWS_ENDPOINT_URL": "http://127.0.0.1:9",
    "AWS_ACCESS_KEY_ID": "testing",
    "AWS_SECRET_ACCESS_KEY": "testing",
    "AWS_SESSION_TOKEN": "testing",
    "AWS_DEFAULT_REGION": "us-east-1",
    "AWS_REGION": "us-east-1",
}
APP = '''\
from lambda_mcp import MCPApp

app = MCPApp("trivial", version="1.0.0")


@app.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b
'''
FIRST_CALL = """\
import json, sys

class Context:
    aws_request_id = "cold-request"
    function_name = "cold"
    function_version = "$LATEST"
    invoked_function_arn = "arn:aws:lambda:us-east-1:123456789012:function:cold"
    memory_limit_in_mb = 1024
    log_group_name = "/aws/lambda/cold"
    log_stream_name = "cold"

    def get_remaining_time_in_millis(self):
        return 30000

event = json.loads(sys.stdin.read())
import lambda_mcp.entrypoints.http as entry
response = entry.handler(event, Context())
heavy = {"pydantic", "pydantic_core", "boto3", "jwt", "aws_lambda_powertools.utilities.parameters"}
# Powertools imports botocore's package itself (its __init__ alone): any module of botocore or boto3 counts
aws = {name for name in sys.modules if name.startswith(("boto3.", "botocore."))}
loaded = sorted((set(sys.modules) & heavy) | aws)
print(json.dumps({"status": response["statusCode"], "body": response["body"], "loaded": loaded}))
"""


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    (tmp_path / "trivial.py").write_text(APP)
    environ = {k: v for k, v in os.environ.items() if not k.startswith("LAMBDA_MCP_")}
    return environ | {
        "LAMBDA_MCP_APP": str(tmp_path / "trivial.py"),
        "LAMBDA_MCP_AUTH": "none",
        "POWERTOOLS_SERVICE_NAME": "cold",
    }


def _first_call(env: dict[str, str]) -> dict[str, Any]:
    """A fresh process: import the HTTP entrypoint, serve a 2026 `tools/call` of a plain tool, check the answer."""
    event = json.loads((ROOT / "events/http-api-v2/modern_tools_call.json").read_text())
    body = json.loads(event["body"])
    body["params"] |= {"name": "add", "arguments": {"a": 1, "b": 2}}
    event["body"] = json.dumps(body)
    event["headers"]["mcp-name"] = "add"
    done = subprocess.run(
        [sys.executable, "-c", FIRST_CALL], input=json.dumps(event), env=env, cwd=ROOT, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    out: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    assert out["status"] == 200
    assert json.loads(out["body"])["result"]["content"] == [{"type": "text", "text": "3"}]
    return out


@pytest.mark.parametrize("state", ["in memory", "deployed"])
def test_a_plain_tool_is_served_cold_without_pydantic_or_the_aws_sdk(env: dict[str, str], state: str) -> None:
    # deployed: DynamoDB, the SQS queue and the Secrets Manager key are configured, and none is needed
    out = _first_call(env | DEPLOYED if state == "deployed" else env)
    assert out["loaded"] == []  # with auth none: none of them on the cold path, boto3 and botocore's client least
