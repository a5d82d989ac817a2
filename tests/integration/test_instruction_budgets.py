"""The cold path stays within its instruction budgets: CPU instructions counted by valgrind's callgrind
(tests/support/instructions.py), which the machine's load does not move, for three fresh processes of
the deployed shape (DynamoDB configured on a moto server on 127.0.0.1, Powertools logs and metrics on as
bench/run.py's LOGGING_ENV, auth none):

- *import*: `import lambda_mcp.entrypoints.http` (the kit built, the app loaded);
- *2026 call*: that import, then a 2026-07-28 `tools/call add(1, 2)` through the Lambda handler;
- *legacy initialize*: that import, then a 2025-11-25 `initialize` (a new session: one PutItem).

Each is a ratio to a floor counted in the same run, what any Python MCP server on Lambda loads anyway,
so that a Python or dependency upgrade moves both: the import of asyncio, json, Starlette's requests and
responses, Mangum and Powertools Logger and Metrics; for the calls, a trivial Starlette app behind Mangum
built and serving the same event, with one Powertools log line and its metric; for the initialize, that
plus a botocore DynamoDB client and one PutItem. A ratio more than 5 % over its recorded figure
(`RECORDED`) fails; so does one more than 5 % under it (a gain to lock in: a slack table would let the
next regression through). `test_a_heavy_import_on_the_cold_path_breaks_the_budget` shows the budget bites.

Each test prints its figures (`-s`), ending with the line of `RECORDED` it measured. To recalibrate after
a change that moves the cold path on purpose (a cut, or an accepted cost), run

    .venv/bin/pytest tests/integration/test_instruction_budgets.py -s -k "not heavy"

and paste the three `"case": ratio,  # kit / floor` lines it prints over `RECORDED`. Wall time: 30-60 s on
two cores (callgrind runs ~50x slower than the machine; each test counts the kit and its floor side by
side, each program once per module). The wall-time figures are bench/run.py's job.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from tests.support.events import load_event
from tests.support.instructions import Count, available, count_all

RECORDED = {  # kit / floor instructions, Python 3.11.7, valgrind 3.19, 2026-11-27
    "import": 1.224,  # 525.8M / 429.5M
    "2026 call": 1.145,  # 531.6M / 464.5M
    "legacy initialize": 1.031,  # 1,175.0M / 1,140.2M
}
REGRESSION = 1.05
"""A ratio may grow by at most 5 % over its recorded figure."""
TABLE = "budget-state"
RESULT = "RESULT "
APP = '''\
from lambda_mcp import MCPApp

app = MCPApp("budget", version="1.0.0")


@app.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b
'''
CONTEXT = """\
import json, sys


class Context:
    aws_request_id = "budget-request"
    function_name = "budget"
    function_version = "$LATEST"
    invoked_function_arn = "arn:aws:lambda:us-east-1:123456789012:function:budget"
    memory_limit_in_mb = 1024
    log_group_name = "/aws/lambda/budget"
    log_stream_name = "budget"

    def get_remaining_time_in_millis(self):
        return 30000
"""
KIT_IMPORT = "import lambda_mcp.entrypoints.http"
KIT_CALL = (
    CONTEXT
    + """
import lambda_mcp.entrypoints.http as entry

response = entry.handler({event!r}, Context())
print({marker!r} + json.dumps(response))
"""
)
FLOOR_IMPORT = (
    "import asyncio, json, starlette.requests, starlette.responses, mangum,"
    " aws_lambda_powertools.logging, aws_lambda_powertools.metrics"
)
FLOOR_CALL = (
    CONTEXT
    + """
from aws_lambda_powertools import Logger
from aws_lambda_powertools.metrics import EphemeralMetrics, MetricUnit
from mangum import Mangum
from starlette.applications import Starlette
from starlette.responses import JSONResponse
from starlette.routing import Route

logger = Logger(service="floor", stream=sys.stdout)
metrics = EphemeralMetrics(namespace="floor", service="floor")
{storage}

async def mcp(request):
    message = await request.json()
    {effect}
    return JSONResponse({{"jsonrpc": "2.0", "id": message["id"], "result": {{"content": []}}}})


handler = Mangum(Starlette(routes=[Route("/mcp", mcp, methods=["POST"])]), lifespan="off")
response = handler({event!r}, Context())
metrics.add_metric(name="Requests", unit=MetricUnit.Count, value=1)
logger.info("request", extra={{"status": response["statusCode"], **metrics.serialize_metric_set()}})
print({marker!r} + json.dumps(response))
"""
)
FLOOR_CLIENT = """
import os

import botocore.session

dynamodb = botocore.session.get_session().create_client("dynamodb")
"""
FLOOR_PUT = (  # a new item each time, as a new session is (the kit's PutItem has the same condition)
    'dynamodb.put_item(TableName="{table}", Item={{"pk": {{"S": os.urandom(8).hex()}}, "sk": {{"S": "floor"}}}},'
    ' ConditionExpression="attribute_not_exists(pk)")'
)


def _events() -> dict[str, dict[str, Any]]:
    call = load_event("http-api-v2", "modern_tools_call")
    body = json.loads(call["body"])
    body["params"] |= {"name": "add", "arguments": {"a": 1, "b": 2}}
    call["body"] = json.dumps(body)
    call["headers"]["mcp-name"] = "add"
    return {"2026 call": call, "legacy initialize": load_event("http-api-v2", "initialize")}


def _programs() -> dict[str, tuple[str, str]]:
    """(kit, floor) programs per case."""
    events = _events()
    call, initialize = events["2026 call"], events["legacy initialize"]
    put = FLOOR_PUT.format(table=TABLE)
    return {
        "import": (KIT_IMPORT, FLOOR_IMPORT),
        "2026 call": (
            KIT_CALL.format(event=call, marker=RESULT),
            FLOOR_CALL.format(event=call, storage="", effect="pass", marker=RESULT),
        ),
        "legacy initialize": (
            KIT_CALL.format(event=initialize, marker=RESULT),
            FLOOR_CALL.format(event=initialize, storage=FLOOR_CLIENT, effect=put, marker=RESULT),
        ),
    }


PROGRAMS = _programs()


@pytest.fixture(scope="module")
def deployed(moto_server_url: str, tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The counted processes' environment (added to tests/support/instructions.py's fixed one): the
    deployed shape on the moto server's state table."""
    if not available():
        pytest.fail("valgrind is not installed: run ./scripts/test (apt valgrind)")
    import boto3

    from lambda_mcp.storage.dynamodb import create_table

    aws = {
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_SESSION_TOKEN": "testing",
        "AWS_DEFAULT_REGION": "us-east-1",
        "AWS_REGION": "us-east-1",
    }
    client = boto3.client(
        "dynamodb",
        endpoint_url=moto_server_url,
        region_name=aws["AWS_REGION"],
        aws_access_key_id=aws["AWS_ACCESS_KEY_ID"],
        aws_secret_access_key=aws["AWS_SECRET_ACCESS_KEY"],
    )
    create_table(client, TABLE)
    app = tmp_path_factory.mktemp("budget") / "budget_app.py"
    app.write_text(APP)
    return aws | {
        "AWS_LAMBDA_FUNCTION_NAME": "budget",
        "AWS_LAMBDA_FUNCTION_MEMORY_SIZE": "1024",
        "LAMBDA_MCP_APP": f"{app}:app",
        "LAMBDA_MCP_AUTH": "none",
        "LAMBDA_MCP_TABLE_NAME": TABLE,
        "AWS_ENDPOINT_URL_DYNAMODB": moto_server_url,
        # logs as deployed (bench/run.py LOGGING_ENV): template.yaml's Globals and Lambda's LoggingConfig
        "POWERTOOLS_SERVICE_NAME": "budget",
        "LAMBDA_MCP_METRICS_NAMESPACE": "budget",
        "AWS_LAMBDA_LOG_LEVEL": "INFO",
        "AWS_LAMBDA_LOG_FORMAT": "JSON",
        "PYTHONUNBUFFERED": "1",
    }


Measure = Callable[[str, str], tuple[Count, Count]]


@pytest.fixture(scope="module")
def measure(deployed: dict[str, str]) -> Measure:
    """`measure(case, added)`: the counts of the kit's program for `case` (with the statement `added` first,
    if any) and of its floor, side by side; each program is counted once per module."""
    counted: dict[str, Count] = {}

    def pair(case: str, added: str = "") -> tuple[Count, Count]:
        kit, floor = PROGRAMS[case]
        programs = [f"{added}\n{kit}" if added else kit, floor]
        counted.update(count_all({p: (p, deployed) for p in programs if p not in counted}))
        return counted[programs[0]], counted[programs[1]]

    return pair


def _response(count: Count) -> tuple[int, dict[str, Any], dict[str, Any]]:
    """Status, headers and JSON body of the response a counted program printed."""
    lines = [line for line in count.stdout.splitlines() if line.startswith(RESULT)]
    assert lines, count.stdout[-2000:]
    response = json.loads(lines[-1][len(RESULT) :])
    headers = {k.lower(): v for k, v in (response.get("headers") or {}).items()}
    return int(response["statusCode"]), headers, json.loads(response["body"])


def _check(case: str, kit: Count, floor: Count) -> float:
    """Print the case's figures and return its ratio; the responses must be right."""
    if case != "import":
        status, headers, body = _response(kit)
        assert status == 200, body
        if case == "2026 call":
            assert body["result"]["content"] == [{"type": "text", "text": "3"}], body
        else:
            assert body["result"]["protocolVersion"] == "2025-11-25", body
            assert headers.get("mcp-session-id"), headers  # the session was written: one PutItem
        assert _response(floor)[0] == 200
    ratio = kit.instructions / floor.instructions
    budget = RECORDED[case] * REGRESSION
    print(
        f"\n{case}: kit {kit.instructions / 1e6:,.1f}M, floor {floor.instructions / 1e6:,.1f}M instructions:"
        f" {ratio:.3f}x the floor (recorded {RECORDED[case]:.3f}x, budget {budget:.3f}x)\n"
        f'    "{case}": {ratio:.3f},  # {kit.instructions / 1e6:,.1f}M / {floor.instructions / 1e6:,.1f}M'
    )
    return ratio


@pytest.mark.parametrize("case", list(RECORDED))
def test_the_cold_path_stays_within_its_instruction_budget(case: str, measure: Measure) -> None:
    ratio = _check(case, *measure(case, ""))
    assert ratio <= RECORDED[case] * REGRESSION, (
        f"{case}: {ratio:.3f}x the floor's instructions, more than {REGRESSION:.2f} x the recorded"
        f" {RECORDED[case]:.3f}x: a regression (if the cost is accepted, recalibrate: this module's docstring)"
    )
    # and a gain is locked in: a table left slack would let the next regression through unseen
    assert ratio >= RECORDED[case] / REGRESSION, (
        f"{case}: {ratio:.3f}x, more than 5 % under the recorded {RECORDED[case]:.3f}x: a gain; recalibrate"
        " (this module's docstring) so that the budget keeps its 5 %"
    )


def test_a_heavy_import_on_the_cold_path_breaks_the_budget(measure: Measure) -> None:
    """pydantic imported on the cold path, as a stray import in the kit would be: more than 5 % over
    today's count, and so over the recorded budget (which the test above keeps within 5 % of today's)."""
    plain, floor = measure("import", "")
    heavy = measure("import", "import pydantic")[0]
    ratio = heavy.instructions / floor.instructions
    print(
        f"\nimport with pydantic: {ratio:.3f}x the floor, {plain.instructions / floor.instructions:.3f}x without"
        f" (+{(heavy.instructions - plain.instructions) / 1e6:,.1f}M instructions)"
    )
    assert heavy.instructions > plain.instructions * REGRESSION
    assert ratio > RECORDED["import"] * REGRESSION, "the recorded table is stale: recalibrate (module docstring)"
