"""template.yaml, checked offline: translated by aws-sam-translator, then linted by cfn-lint (infra/)."""

from __future__ import annotations

import json
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest
from samtranslator.yaml_helper import yaml_parse

from lambda_mcp.storage.dynamodb import keys
from lambda_mcp.storage.dynamodb.table import TABLE_DEFINITION
from tests.infra import templates
from tests.infra.templates import as_list
from tests.infra.templates import statements as role_statements
from tests.support.processes import ROOT

VALIDATE = ROOT / "infra/validate_template.py"
HTTP_HANDLER = "lambda_mcp.entrypoints.http.handler"
WORKER_HANDLER = "lambda_mcp.entrypoints.worker.handler"
TABLE_ACTIONS = {"dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:Query"}
SQS_CONSUME_ACTIONS = {"sqs:ReceiveMessage", "sqs:DeleteMessage", "sqs:GetQueueAttributes"}
PINNED_ADAPTER = "753240598075:layer:LambdaAdapterLayerArm64:30"  # Lambda Web Adapter 1.1.0's public layer
WEB_ADAPTER_LAYER = {
    "Fn::If": [
        "Streaming",
        {
            "Fn::If": [
                "HasWebAdapterLayerArn",
                {"Ref": "WebAdapterLayerArn"},
                {"Fn::Sub": "arn:${AWS::Partition}:lambda:${AWS::Region}:" + PINNED_ADAPTER},
            ]
        },
        {"Ref": "AWS::NoValue"},
    ]
}


def _validate(template: Path, out: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(VALIDATE), str(template), "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
    )


@pytest.fixture(scope="module")
def cfn(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    out = tmp_path_factory.mktemp("cfn") / "template.cfn.json"
    done = _validate(ROOT / "template.yaml", out)
    print("\n" + done.stdout)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.strip().endswith("0 findings")
    loaded: dict[str, Any] = json.loads(out.read_text())
    return loaded


def _of_type(cfn: dict[str, Any], kind: str) -> dict[str, dict[str, Any]]:
    return {name: r for name, r in cfn["Resources"].items() if r["Type"] == kind}


def _buffered(value: Any) -> Any:
    """A property as Transport=buffered (the default) has it: the last branch of a `Streaming` Fn::If."""
    if isinstance(value, dict) and set(value) == {"Fn::If"} and value["Fn::If"][0] == "Streaming":
        return value["Fn::If"][2]
    return value


def _sqs(value: Any) -> Any:
    """A value only TaskBackend=sqs (the default) has, `Fn::If [SqsBackend, v, NoValue]`: v."""
    assert value == {"Fn::If": ["SqsBackend", value["Fn::If"][1], {"Ref": "AWS::NoValue"}]}, value
    return value["Fn::If"][1]


def _sqs_statements(cfn: dict[str, Any], props: dict[str, Any]) -> tuple[list[dict[str, Any]], list[str]]:
    """A role's statements with TaskBackend=sqs (every mode's, and the queues'), and the conditions of all of its
    conditional statements, in order (test_template_durable checks the DurableBackend ones)."""
    found = role_statements(cfn, props)
    conditional = [s["Fn::If"] for s in found if "Fn::If" in s]
    sqs = [branch for condition, branch, _ in conditional if condition == "SqsBackend"]
    return [s for s in found if "Fn::If" not in s] + sqs, [c[0] for c in conditional]


def _function(cfn: dict[str, Any], handler: str) -> tuple[str, dict[str, Any]]:
    """The one function running `handler` (with the default Transport): its logical id and properties."""
    ((name, function),) = [
        (name, f)
        for name, f in _of_type(cfn, "AWS::Lambda::Function").items()
        if _buffered(f["Properties"]["Handler"]) == handler
    ]
    return name, function["Properties"]


def _arn(name: str) -> dict[str, Any]:
    return {"Fn::GetAtt": [name, "Arn"]}


def _allowing(statements: list[dict[str, Any]], prefix: str) -> list[dict[str, Any]]:
    return [s for s in statements if any(a.startswith(prefix) for a in as_list(s["Action"]))]


def _assert_layers(cfn: dict[str, Any], props: dict[str, Any]) -> None:
    """The dependencies' layer, then the kit's (SAM suffixes each logical id with a content hash); then, on
    the HTTP function only, the Lambda Web Adapter's with Transport=streaming."""
    deps, kit = (ref["Ref"] for ref in props["Layers"][:2])
    assert props["Layers"][2:] in ([], [WEB_ADAPTER_LAYER])
    assert deps.startswith("DepsLayer") and kit.startswith("KitLayer")
    for name in (deps, kit):
        layer = cfn["Resources"][name]["Properties"]
        assert layer["CompatibleArchitectures"] == ["arm64"] and layer["CompatibleRuntimes"] == ["python3.13"]


def test_every_function_is_built_by_the_shared_makefile_and_the_layers_by_theirs() -> None:
    sam = yaml_parse((ROOT / "template.yaml").read_text())["Resources"]
    functions = {name: r for name, r in sam.items() if r["Type"] == "AWS::Serverless::Function"}
    assert set(functions) == {
        "McpHttpFunction",
        "TaskWorkerFunction",
        "McpAuthorizerFunction",
        "DurableTaskWorkerFunction",  # TaskBackend=durable only
        "AgentCoreToolsFunction",  # AgentCoreLambdaTarget=on only
    }
    extra_layers = {"McpHttpFunction": [WEB_ADAPTER_LAYER], "DurableTaskWorkerFunction": [{"Ref": "DurableLayer"}]}
    for name, resource in functions.items():  # no python3.13 needed on the build machine (docs/deploy.md)
        assert resource["Metadata"] == {
            "BuildMethod": "makefile",
            "ContextPath": "src/lambda_mcp/scaffold/project/builds/function",
        }, name
        assert (ROOT / resource["Metadata"]["ContextPath"] / "Makefile").is_file()
        layers = resource["Properties"]["Layers"]
        assert layers[:2] == [{"Ref": "DepsLayer"}, {"Ref": "KitLayer"}], name
        assert layers[2:] == extra_layers.get(name, []), name
    for layer, folder in (("DepsLayer", "deps"), ("DurableLayer", "durable")):
        built = sam[layer]
        assert built["Properties"]["ContentUri"] == f"src/lambda_mcp/scaffold/project/builds/{folder}/"
        assert built["Metadata"] == {"BuildMethod": "makefile", "BuildArchitecture": "arm64"}
        assert (ROOT / built["Properties"]["ContentUri"] / "Makefile").is_file()
    assert sam["DurableLayer"]["Condition"] == "DurableBackend"  # built by `sam build`, deployed only when used
    kit = sam["KitLayer"]
    # The kit layer's cache key is src/ itself: any change to the kit rebuilds it.
    assert kit["Properties"]["ContentUri"] == "src/"
    assert kit["Metadata"] == {"BuildMethod": "makefile", "BuildArchitecture": "arm64", "ContextPath": "layers/kit"}
    assert (ROOT / "layers/kit/Makefile").is_file() and not (ROOT / "layers/deps").exists()


def test_the_function_runs_the_kit_handler_on_arm64_python313_with_the_layer(cfn: dict[str, Any]) -> None:
    _, props = _function(cfn, HTTP_HANDLER)
    assert props["Runtime"] == "python3.13" and props["Architectures"] == ["arm64"]
    _assert_layers(cfn, props)
    env = props["Environment"]["Variables"]
    assert env["LAMBDA_MCP_APP"] == {"Ref": "AppPath"}
    assert env["LAMBDA_MCP_TABLE_NAME"] == {"Ref": "StateTable"}
    # The state key's secret by ARN; its value is read at run time, never put in the configuration.
    assert env["LAMBDA_MCP_STATE_KEY_SECRET"] == {"Ref": "StateKeySecret"}
    assert "LAMBDA_MCP_STATE_KEY" not in env and "resolve:secretsmanager" not in json.dumps(cfn)
    assert _sqs(env["LAMBDA_MCP_TASK_QUEUE_URL"]) == {"Ref": "TaskQueue"}  # a task's run is enqueued here
    assert env["LAMBDA_MCP_TASK_MAX_TTL_SECONDS"] == {"Ref": "TaskTtlSeconds"}
    # the timeline a task's shortest lifetime is worked out from: the worker's timeout, the sweeper's rate
    assert env["LAMBDA_MCP_TASK_WORKER_TIMEOUT_SECONDS"] == str(worker_timeout(cfn))
    assert env["LAMBDA_MCP_TASK_SWEEP_SECONDS"] == "300"
    # Buffered, it never outlives the API Gateway integration timeout; streaming, at most Lambda's 15 minutes.
    streaming, timeout = props["Timeout"]["Fn::If"][1:]
    assert timeout <= 30 and streaming == {"Ref": "StreamingTimeout"}
    assert cfn["Parameters"]["StreamingTimeout"]["MaxValue"] == 900


def test_http_api_is_the_default_and_rest_and_a_function_url_are_options(cfn: dict[str, Any]) -> None:
    assert cfn["Parameters"]["ApiType"]["Default"] == "HTTP"
    assert cfn["Parameters"]["ApiType"]["AllowedValues"] == ["HTTP", "REST", "URL"]
    (http,) = _of_type(cfn, "AWS::ApiGatewayV2::Api").values()
    assert http["Condition"] == "UseHttpApi" and "Body" in http["Properties"]
    (rest,) = _of_type(cfn, "AWS::ApiGateway::RestApi").values()
    assert rest["Condition"] == "UseRestApi" and "Body" in rest["Properties"]
    (url,) = _of_type(cfn, "AWS::Lambda::Url").values()
    assert url["Condition"] == "UseFunctionUrl"
    http_function, _ = _function(cfn, HTTP_HANDLER)
    live, _ = templates.alias(cfn, http_function)
    # Everything that invokes the HTTP function invokes its `live` alias, never the function itself.
    for permission in _of_type(cfn, "AWS::Lambda::Permission").values():
        assert permission["Properties"]["FunctionName"] != {"Ref": http_function}
    permissions = [
        p for p in _of_type(cfn, "AWS::Lambda::Permission").values() if p["Properties"]["FunctionName"] == {"Ref": live}
    ]
    assert sorted(p["Condition"] for p in permissions) == [
        "AgentCoreGatewayCalls",  # an AgentCore gateway's role on an IAM Function URL (AgentCoreGatewayRoleArn)
        "AgentCoreGatewayCalls",
        "PublicFunctionUrl",
        "PublicFunctionUrl",
        "UseHttpApi",
        "UseRestApi",
    ]
    assert set(cfn["Outputs"]) >= {"McpEndpoint", "StateTableName", "AuthModeInUse"}


def test_the_table_matches_the_kit_definition_and_has_ttl(cfn: dict[str, Any]) -> None:
    (table,) = _of_type(cfn, "AWS::DynamoDB::Table").values()
    props = table["Properties"]
    for key in ("AttributeDefinitions", "KeySchema", "GlobalSecondaryIndexes", "BillingMode"):
        assert props[key] == TABLE_DEFINITION[key], key
    assert props["TimeToLiveSpecification"] == {"AttributeName": keys.EXPIRES_AT, "Enabled": True}


@pytest.mark.parametrize("tracing", ["off", "on"])
def test_iam_is_least_privilege(tracing: str) -> None:
    deployed = templates.deployed(
        AuthMode="jwt", ApiType="REST", AuthIssuer=templates.ISSUER, AuthAudience=templates.AUDIENCE, Tracing=tracing
    )
    roles = _of_type(deployed, "AWS::IAM::Role")
    assert len(roles) == 3  # the HTTP function's, the worker's and (REST + jwt) the authorizer's
    for role in roles.values():
        policies = role["Properties"].get("Policies", [])
        statements = [s for policy in policies for s in policy["PolicyDocument"]["Statement"]]
        for statement in statements:
            assert statement["Effect"] == "Allow"
            assert not any("*" in a for a in as_list(statement["Action"])), statement
            assert "*" not in json.dumps(statement["Resource"]).replace("/index/*", "")
        # Only log writing comes from a managed policy (SAM `SQS` events would add
        # AWSLambdaSQSQueueExecutionRole, whose Resource is `*`), and X-Ray writing with Tracing=on:
        # AWS::LanguageExtensions decides the Tracing `Fn::If` before SAM chooses the role's policies.
        managed = [json.dumps(m) for m in role["Properties"]["ManagedPolicyArns"]]
        assert len(managed) == (2 if tracing == "on" else 1)
        assert "AWSLambdaBasicExecutionRole" in managed[0]
        assert all("AWSXrayWriteOnlyAccess" in m for m in managed[1:])


def test_the_http_function_may_use_the_table_send_to_the_task_queue_and_read_its_key_only(
    cfn: dict[str, Any],
) -> None:
    _, props = _function(cfn, HTTP_HANDLER)
    # Every mode's statements, with TaskBackend=sqs; the authorization facade's (AuthMode=cognito, proxy) are
    # conditional, and test_template_facade checks them (the operator clients' reads: test_template_agents; the
    # connections' key and secrets: test_template_connections); the durable backend's, test_template_durable.
    statements, conditions = _sqs_statements(cfn, props)
    assert conditions == [
        "SqsBackend", "DurableBackend", "DurableBackend", "UsesFacade", "UsesFacade", "AuthCognito",
        "FacadeClientsInParameter", "FacadeClientsInSecret", "UsesFacade", "ConnectionSecretsInSecretsManager",
        "ConnectionSecretsInParameters", "CallsToolFunctions", "CallsToolApis", "ReadsToolSecrets",
    ]  # fmt: skip
    assert {a for s in statements for a in as_list(s["Action"])} == TABLE_ACTIONS | {
        "sqs:SendMessage",
        "secretsmanager:GetSecretValue",
    }
    (sqs,) = _allowing(statements, "sqs:")
    assert as_list(sqs["Action"]) == ["sqs:SendMessage"]
    assert as_list(sqs["Resource"]) == [_arn("TaskQueue")]
    (secret,) = _allowing(statements, "secretsmanager:")
    assert as_list(secret["Action"]) == ["secretsmanager:GetSecretValue"]
    # The secret whose ARN the function is given, and no other.
    assert as_list(secret["Resource"]) == [{"Ref": "StateKeySecret"}]
    assert props["Environment"]["Variables"]["LAMBDA_MCP_STATE_KEY_SECRET"] == {"Ref": "StateKeySecret"}


def test_the_worker_runs_the_kit_worker_handler_with_the_layer_and_its_settings(cfn: dict[str, Any]) -> None:
    http_name, http = _function(cfn, HTTP_HANDLER)
    worker, props = _function(cfn, WORKER_HANDLER)
    assert props["Runtime"] == "python3.13" and props["Architectures"] == ["arm64"]
    _assert_layers(cfn, props)
    assert props["Layers"] == http["Layers"][:2]  # not the web adapter's: the worker never streams
    # The same code folder (your app): the validator swaps each CodeUri for a per-function placeholder.
    sam = yaml_parse((ROOT / "template.yaml").read_text())["Resources"]
    assert sam[worker]["Properties"]["CodeUri"] == sam[http_name]["Properties"]["CodeUri"]
    assert props["Timeout"] == 900
    env = props["Environment"]["Variables"]
    assert env["LAMBDA_MCP_APP"] == {"Ref": "AppPath"}
    assert env["LAMBDA_MCP_TABLE_NAME"] == {"Ref": "StateTable"}
    # It never seals a requestState: no key, and no access to the secret (next test), but where it runs the tools of
    # tasks that act as the user (AuthMode=cognito, proxy; test_template_connections).
    assert [name for name in env if name.startswith("LAMBDA_MCP_STATE_KEY")] == ["LAMBDA_MCP_STATE_KEY_SECRET"]
    assert env["LAMBDA_MCP_STATE_KEY_SECRET"] == {
        "Fn::If": ["FacadeSqsWorker", {"Ref": "StateKeySecret"}, {"Ref": "AWS::NoValue"}]
    }
    assert env["LAMBDA_MCP_SESSION_TTL_SECONDS"] == {"Ref": "SessionTtlSeconds"}
    assert _sqs(env["LAMBDA_MCP_TASK_QUEUE_URL"]) == {"Ref": "TaskQueue"}
    assert _sqs(env["LAMBDA_MCP_TASK_DLQ_ARN"]) == _arn("TaskDeadLetterQueue")
    assert env["LAMBDA_MCP_TASK_MAX_TTL_SECONDS"] == {"Ref": "TaskTtlSeconds"}
    # the timeline a task's shortest lifetime is worked out from: the worker's timeout, the sweeper's rate
    assert env["LAMBDA_MCP_TASK_WORKER_TIMEOUT_SECONDS"] == str(worker_timeout(cfn))
    assert env["LAMBDA_MCP_TASK_SWEEP_SECONDS"] == "300"


def test_the_task_queues_outlast_a_run_and_dead_letter_after_three_receives(cfn: dict[str, Any]) -> None:
    _, worker = _function(cfn, WORKER_HANDLER)
    queues = _of_type(cfn, "AWS::SQS::Queue")
    assert set(queues) == {"TaskQueue", "TaskDeadLetterQueue"}
    assert {q["Condition"] for q in queues.values()} == {"SqsBackend"}  # TaskBackend=durable has no queue
    queue, dlq = queues["TaskQueue"]["Properties"], queues["TaskDeadLetterQueue"]["Properties"]
    # never below the worker's timeout (a message a worker still runs must not reach another), and short
    # enough that 3 receives reach the dead-letter queue well inside a task's shortest lifetime
    assert queue["VisibilityTimeout"] == dlq["VisibilityTimeout"] == worker["Timeout"] + 60
    shortest = 3 * (worker["Timeout"] * 1.1 + 300) + 300
    assert 3 * queue["VisibilityTimeout"] < shortest
    assert queue["RedrivePolicy"] == {"deadLetterTargetArn": _arn("TaskDeadLetterQueue"), "maxReceiveCount": 3}
    assert "RedrivePolicy" not in dlq
    # A dead-lettered message keeps its first enqueue time: the DLQ must keep messages longer.
    assert dlq["MessageRetentionPeriod"] > queue["MessageRetentionPeriod"]
    assert queue["SqsManagedSseEnabled"] is True and dlq["SqsManagedSseEnabled"] is True


def test_the_worker_consumes_the_queue_one_task_at_a_time_by_default_and_the_dead_letters(cfn: dict[str, Any]) -> None:
    worker, props = _function(cfn, WORKER_HANDLER)
    mappings = _of_type(cfn, "AWS::Lambda::EventSourceMapping").values()
    assert len(mappings) == 2
    live, _ = templates.alias(cfn, worker)  # SnapStart=on: its `live` alias (test_template_snapstart)
    on_alias = {"Fn::If": ["SnapStartOn", {"Ref": live}, {"Ref": worker}]}
    assert all(m["Properties"]["FunctionName"] == on_alias for m in mappings)
    assert {m["Condition"] for m in mappings} == {"SqsBackend"}
    by_source = {json.dumps(m["Properties"]["EventSourceArn"]): m["Properties"] for m in mappings}
    runs = by_source[json.dumps(_arn("TaskQueue"))]
    assert runs["BatchSize"] == {"Ref": "WorkerBatchSize"}
    assert cfn["Parameters"]["WorkerBatchSize"]["Default"] == 1
    assert runs["FunctionResponseTypes"] == ["ReportBatchItemFailures"]
    dead = by_source[json.dumps(_arn("TaskDeadLetterQueue"))]
    assert dead["FunctionResponseTypes"] == ["ReportBatchItemFailures"]
    # A burst of tasks runs at most WorkerMaxConcurrency at a time (2 is Lambda's minimum).
    assert runs["ScalingConfig"] == {"MaximumConcurrency": {"Ref": "WorkerMaxConcurrency"}}
    spec = cfn["Parameters"]["WorkerMaxConcurrency"]
    assert spec["Default"] == 10 and spec["MinValue"] == 2
    assert dead["ScalingConfig"] == {"MaximumConcurrency": 2}
    # The handler tells dead letters apart by eventSourceARN: it must be the ARN it is given.
    assert dead["EventSourceArn"] == _sqs(props["Environment"]["Variables"]["LAMBDA_MCP_TASK_DLQ_ARN"])


def test_a_schedule_runs_the_sweeper_on_the_worker(cfn: dict[str, Any]) -> None:
    worker, _ = _function(cfn, WORKER_HANDLER)
    (rule_name, rule), *others = _of_type(cfn, "AWS::Events::Rule").items()
    assert not others
    assert rule["Properties"]["ScheduleExpression"] == "rate(5 minutes)"
    live, _ = templates.alias(cfn, worker)  # SAM points a function's events at its AutoPublishAlias
    assert [t["Arn"] for t in rule["Properties"]["Targets"]] == [{"Ref": live}]
    (permission,) = [
        p["Properties"]
        for p in _of_type(cfn, "AWS::Lambda::Permission").values()
        if p["Properties"]["FunctionName"] == {"Ref": live}
    ]
    assert permission["Principal"] == "events.amazonaws.com" and permission["SourceArn"] == _arn(rule_name)


def test_the_worker_may_use_the_table_consume_its_queues_and_requeue_only(cfn: dict[str, Any]) -> None:
    _, props = _function(cfn, WORKER_HANDLER)
    # TaskBackend=durable's: test_template_durable; the facade's where it runs tasks: test_template_connections
    statements, conditions = _sqs_statements(cfn, props)
    assert conditions == [
        "SqsBackend", "SqsBackend", "DurableBackend", "DurableBackend", *["FacadeSqsWorker"] * 6,
        "SqsBackend", "SqsBackend", "SqsBackend",  # what the app's tools call and read: test_template_tools_grants
    ]  # fmt: skip
    statements = [s for s in statements if "Fn::If" not in s]  # those three, conditional on the Tool*Arns lists
    assert not _allowing(statements, "secretsmanager:")  # it never reads the state key (but in the facade modes)
    assert {a.split(":")[0] for s in statements for a in as_list(s["Action"])} == {"dynamodb", "sqs"}
    (table,) = _allowing(statements, "dynamodb:")
    assert set(as_list(table["Action"])) == TABLE_ACTIONS
    assert as_list(table["Resource"]) == [_arn("StateTable"), {"Fn::Sub": "${StateTable.Arn}/index/*"}]
    sqs = _allowing(statements, "sqs:")
    assert {a for s in sqs for a in as_list(s["Action"])} == SQS_CONSUME_ACTIONS | {"sqs:SendMessage"}
    for statement in sqs:
        resources = as_list(statement["Resource"])
        if "sqs:SendMessage" in as_list(statement["Action"]):
            assert as_list(statement["Action"]) == ["sqs:SendMessage"]  # the sweeper re-enqueues
            assert resources == [_arn("TaskQueue")]
        else:
            assert sorted(map(json.dumps, resources)) == sorted(
                json.dumps(_arn(q)) for q in ("TaskQueue", "TaskDeadLetterQueue")
            )


def test_the_task_resources_are_in_the_outputs(cfn: dict[str, Any]) -> None:
    outputs = cfn["Outputs"]
    assert outputs["TaskQueueUrl"]["Value"] == {"Ref": "TaskQueue"}
    assert outputs["TaskDeadLetterQueueUrl"]["Value"] == {"Ref": "TaskDeadLetterQueue"}
    worker, _ = _function(cfn, WORKER_HANDLER)
    assert outputs["TaskWorkerFunctionName"]["Value"] == {"Ref": worker}


def test_the_validator_catches_bugs_that_only_show_after_the_transform(tmp_path: Path) -> None:
    bad = tmp_path / "template.yaml"
    text = (ROOT / "template.yaml").read_text()
    bad.write_text(
        text.replace("Runtime: python3.13", "Runtime: python3.99")
        .replace("Timeout: 900 # TaskQueue", "Timeout: 1200 # TaskQueue")
        .replace("VisibilityTimeout: 960", "VisibilityTimeout: 600")
    )
    done = _validate(bad, tmp_path / "out.json")
    assert done.returncode == 1
    assert "E3030" in done.stdout and "E3717" in done.stdout
    assert "E3505" in done.stdout  # a queue's visibility timeout shorter than its consumer's timeout


def test_samconfig_deploys_with_the_capabilities_and_known_parameter_values(cfn: dict[str, Any]) -> None:
    config = tomllib.loads((ROOT / "samconfig.toml").read_text())["default"]
    deploy = config["deploy"]["parameters"]
    # The transforms (AWS::LanguageExtensions, then SAM's) and the functions' roles.
    assert set(deploy["capabilities"].split()) == {"CAPABILITY_IAM", "CAPABILITY_AUTO_EXPAND"}
    for pair in deploy["parameter_overrides"].split():
        name, value = pair.split("=", 1)
        spec = cfn["Parameters"][name]
        assert "AllowedValues" not in spec or value in map(str, spec["AllowedValues"]), pair
    assert "AuthMode" not in deploy["parameter_overrides"]  # a public endpoint is a choice, asked for
    assert config["build"]["parameters"] == {"cached": True, "parallel": True}


def worker_timeout(cfn: dict[str, Any]) -> int:
    _, worker = _function(cfn, WORKER_HANDLER)
    timeout: int = worker["Timeout"]
    return timeout
