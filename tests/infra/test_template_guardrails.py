"""template.yaml's operational guardrails, on the CloudFormation each parameter combination deploys: log retention,
alarms, concurrency, stage throttling, the production stage's retention, the alias, the state key, tracing."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from samtranslator.yaml_helper import yaml_parse

from tests.infra import templates
from tests.infra.templates import AUTHORIZER_HANDLER, HTTP_HANDLER, WORKER_HANDLER, of_type
from tests.support.processes import ROOT

REST_JWT = {"ApiType": "REST", "AuthMode": "jwt", "AuthIssuer": templates.ISSUER, "AuthAudience": templates.AUDIENCE}
CLOUDWATCH_RETENTION_DAYS = [1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731]
CLOUDWATCH_RETENTION_DAYS += [1096, 1827, 2192, 2557, 2922, 3288, 3653]
COMBINATIONS = {
    "defaults": {},
    "rest-jwt": REST_JWT,
    "url-iam": {"ApiType": "URL", "AuthMode": "iam"},
    "everything-on": {
        "ApiType": "REST",
        "Stage": "production",
        "Tracing": "on",
        "AlarmEmail": "ops@example.com",
        "HttpReservedConcurrency": "20",
        "WorkerReservedConcurrency": "15",
        "WorkerMaxConcurrency": "5",
        "LogRetentionDays": "365",
    },
}


@pytest.mark.parametrize("values", COMBINATIONS.values(), ids=list(COMBINATIONS))
def test_each_combination_deploys_lint_clean(values: dict[str, str], tmp_path: Path) -> None:
    assert templates.findings(templates.deployed(**values), tmp_path) == []


def test_every_function_logs_to_its_own_group_with_the_retention() -> None:
    cfn = templates.deployed(**REST_JWT)
    spec = cfn["Parameters"]["LogRetentionDays"]
    assert spec["Default"] == 30 and spec["AllowedValues"] == CLOUDWATCH_RETENTION_DAYS
    groups = {json.dumps(g["Properties"]["LogGroupName"]): g for g in of_type(cfn, "AWS::Logs::LogGroup").values()}
    functions = of_type(cfn, "AWS::Lambda::Function")
    assert len(functions) == 3 and len(groups) == 3  # the HTTP function, the worker, the REST authorizer
    for name in functions:
        group = groups[json.dumps({"Fn::Sub": f"/aws/lambda/${{{name}}}"})]["Properties"]
        assert group["RetentionInDays"] == {"Ref": "LogRetentionDays"}
    assert len(of_type(templates.deployed(), "AWS::Logs::LogGroup")) == 2  # no authorizer, no group


def _alarms(cfn: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {name: a["Properties"] for name, a in of_type(cfn, "AWS::CloudWatch::Alarm").items()}


@pytest.mark.parametrize(
    ("api", "api_alarm"), [("HTTP", "HttpApi5xxAlarm"), ("REST", "RestApi5xxAlarm"), ("URL", None)]
)
def test_the_alarms_watch_errors_dead_letters_5xx_throttles_and_the_table(api: str, api_alarm: str | None) -> None:
    cfn = templates.deployed(ApiType=api)
    alarms = _alarms(cfn)
    expected = {
        "WorkerErrorsAlarm",
        "TasksDeadLetteredAlarm",
        "TasksExpiredAlarm",
        "HttpFunctionThrottlesAlarm",
        "WorkerThrottlesAlarm",
        "StateTableThrottlesAlarm",
    }
    assert set(alarms) == expected | ({api_alarm} if api_alarm else set())  # only the API in use
    for props in alarms.values():
        assert props["TreatMissingData"] == "notBreaching"
        assert props["ComparisonOperator"] == "GreaterThanOrEqualToThreshold" and props["Threshold"] == 1
    http, _ = templates.function(cfn, HTTP_HANDLER)
    worker, _ = templates.function(cfn, WORKER_HANDLER)

    def metric(name: str) -> tuple[str, str, list[dict[str, Any]]]:
        return alarms[name]["Namespace"], alarms[name]["MetricName"], alarms[name]["Dimensions"]

    assert metric("WorkerErrorsAlarm") == ("AWS/Lambda", "Errors", [{"Name": "FunctionName", "Value": {"Ref": worker}}])
    assert metric("HttpFunctionThrottlesAlarm") == (
        "AWS/Lambda",
        "Throttles",
        [{"Name": "FunctionName", "Value": {"Ref": http}}],
    )
    assert metric("WorkerThrottlesAlarm") == (
        "AWS/Lambda",
        "Throttles",
        [{"Name": "FunctionName", "Value": {"Ref": worker}}],
    )
    if api == "HTTP":  # by ApiId and the stage SAM creates
        (api_id,) = of_type(cfn, "AWS::ApiGatewayV2::Api")
        (stage,) = of_type(cfn, "AWS::ApiGatewayV2::Stage").values()
        assert metric("HttpApi5xxAlarm") == (
            "AWS/ApiGateway",
            "5xx",
            [{"Name": "ApiId", "Value": {"Ref": api_id}}, {"Name": "Stage", "Value": stage["Properties"]["StageName"]}],
        )
    if api == "REST":  # by the API's name and stage
        (rest,) = of_type(cfn, "AWS::ApiGateway::RestApi").values()
        (stage,) = of_type(cfn, "AWS::ApiGateway::Stage").values()
        assert metric("RestApi5xxAlarm") == (
            "AWS/ApiGateway",
            "5XXError",
            [
                {"Name": "ApiName", "Value": rest["Properties"]["Name"]},
                {"Name": "Stage", "Value": stage["Properties"]["StageName"]},
            ],
        )
    # Read and write throttles of the state table, summed by metric math.
    table = alarms["StateTableThrottlesAlarm"]["Metrics"]
    read_write = {
        m["MetricStat"]["Metric"]["MetricName"]: m for m in table if "MetricStat" in m and not m["ReturnData"]
    }
    assert set(read_write) == {"ReadThrottleEvents", "WriteThrottleEvents"}
    for m in read_write.values():
        assert m["MetricStat"]["Metric"]["Namespace"] == "AWS/DynamoDB"
        assert m["MetricStat"]["Metric"]["Dimensions"] == [{"Name": "TableName", "Value": {"Ref": "StateTable"}}]
    (expression,) = [m for m in table if m.get("ReturnData")]
    assert all(m["Id"] in expression["Expression"] for m in read_write.values())


def test_the_dead_letter_alarm_reads_the_metric_where_the_functions_emit_it() -> None:
    """The kit emits TasksDeadLettered (EMF) in LAMBDA_MCP_METRICS_NAMESPACE with the dimension service =
    POWERTOOLS_SERVICE_NAME: the alarm must read that namespace and that dimension, and every function the
    same ones."""
    cfn = templates.deployed(**REST_JWT)
    alarm = _alarms(cfn)["TasksDeadLetteredAlarm"]
    assert alarm["MetricName"] == "TasksDeadLettered" and alarm["Statistic"] == "Sum"
    assert cfn["Parameters"]["MetricsNamespace"]["Default"] == "lambda-mcp"
    (dimension,) = alarm["Dimensions"]
    assert dimension["Name"] == "service"
    for handler in (HTTP_HANDLER, WORKER_HANDLER, AUTHORIZER_HANDLER):
        env = templates.env(cfn, handler)
        assert env["LAMBDA_MCP_METRICS_NAMESPACE"] == alarm["Namespace"] == {"Ref": "MetricsNamespace"}
        assert env["POWERTOOLS_SERVICE_NAME"] == dimension["Value"] == {"Ref": "AWS::StackName"}


def test_the_expired_tasks_alarm_reads_the_sweepers_metric_where_the_worker_emits_it() -> None:
    """Issue 41: the sweeper counts a task that expired while working (`TasksExpired`, EMF, in the
    worker's LAMBDA_MCP_METRICS_NAMESPACE with service = POWERTOOLS_SERVICE_NAME); the alarm reads it
    there and fires on one."""
    cfn = templates.deployed(**REST_JWT)
    alarm = _alarms(cfn)["TasksExpiredAlarm"]
    assert alarm["MetricName"] == "TasksExpired" and alarm["Statistic"] == "Sum" and alarm["Threshold"] == 1
    env = templates.env(cfn, WORKER_HANDLER)  # the sweeper is the worker's scheduled event
    assert alarm["Namespace"] == env["LAMBDA_MCP_METRICS_NAMESPACE"] == {"Ref": "MetricsNamespace"}
    assert alarm["Dimensions"] == [{"Name": "service", "Value": env["POWERTOOLS_SERVICE_NAME"]}]
    assert alarm["Period"] == 300 and alarm["EvaluationPeriods"] == 1


def test_an_alarm_email_adds_the_topic_and_every_alarm_notifies_it() -> None:
    quiet = templates.deployed()
    assert not of_type(quiet, "AWS::SNS::Topic") and "AlarmTopicArn" not in quiet["Outputs"]
    assert all("AlarmActions" not in props for props in _alarms(quiet).values())
    assert quiet["Parameters"]["AlarmEmail"]["Default"] == ""
    loud = templates.deployed(AlarmEmail="ops@example.com")
    ((topic, props),) = of_type(loud, "AWS::SNS::Topic").items()
    assert props["Properties"]["Subscription"] == [{"Protocol": "email", "Endpoint": {"Ref": "AlarmEmail"}}]
    alarms = _alarms(loud)
    assert alarms and all(a["AlarmActions"] == [{"Ref": topic}] for a in alarms.values())
    assert set(alarms) == set(_alarms(quiet))  # the same alarms either way


def test_reserved_concurrency_is_opt_in() -> None:
    unreserved = templates.deployed()
    for handler in (HTTP_HANDLER, WORKER_HANDLER):  # a new account's quota of 10 could not reserve any
        assert "ReservedConcurrentExecutions" not in templates.function(unreserved, handler)[1]
    for name in ("HttpReservedConcurrency", "WorkerReservedConcurrency"):
        assert unreserved["Parameters"][name]["Default"] == 0
    reserved = templates.deployed(HttpReservedConcurrency="20", WorkerReservedConcurrency="15")
    http = templates.function(reserved, HTTP_HANDLER)[1]
    worker = templates.function(reserved, WORKER_HANDLER)[1]
    assert http["ReservedConcurrentExecutions"] == {"Ref": "HttpReservedConcurrency"}
    assert worker["ReservedConcurrentExecutions"] == {"Ref": "WorkerReservedConcurrency"}
    only_worker = templates.deployed(WorkerReservedConcurrency="15")
    assert "ReservedConcurrentExecutions" not in templates.function(only_worker, HTTP_HANDLER)[1]


def test_both_api_stages_throttle_every_route() -> None:
    spec = templates.deployed()["Parameters"]
    assert (spec["ThrottleBurstLimit"]["Default"], spec["ThrottleRateLimit"]["Default"]) == (100, 50)
    limits = {
        "ThrottlingBurstLimit": {"Ref": "ThrottleBurstLimit"},
        "ThrottlingRateLimit": {"Ref": "ThrottleRateLimit"},
    }
    (http,) = of_type(templates.deployed(ApiType="HTTP"), "AWS::ApiGatewayV2::Stage").values()
    assert http["Properties"]["DefaultRouteSettings"] == limits
    (rest,) = of_type(templates.deployed(ApiType="REST"), "AWS::ApiGateway::Stage").values()
    assert rest["Properties"]["MethodSettings"] == [{"ResourcePath": "/*", "HttpMethod": "*", **limits}]


@pytest.mark.parametrize("stage", ["dev", "production"])
def test_production_keeps_the_state_and_the_key_and_recovers_the_table(stage: str) -> None:
    cfn = templates.deployed(Stage=stage)
    policy = "Retain" if stage == "production" else "Delete"
    for name in ("StateTable", "StateKeySecret"):
        resource = cfn["Resources"][name]
        assert (resource["DeletionPolicy"], resource["UpdateReplacePolicy"]) == (policy, policy), name
    recovery = cfn["Resources"]["StateTable"]["Properties"]["PointInTimeRecoverySpecification"]
    assert recovery == {"PointInTimeRecoveryEnabled": stage == "production"}
    assert cfn["Parameters"]["Stage"]["AllowedValues"] == ["dev", "production"]
    # An intrinsic DeletionPolicy needs AWS::LanguageExtensions, which must run before the SAM transform.
    sam = yaml_parse((ROOT / "template.yaml").read_text())
    assert sam["Transform"] == ["AWS::LanguageExtensions", "AWS::Serverless-2016-10-31"]
    assert templates.transformed()["Parameters"]["Stage"]["Default"] == "dev"


@pytest.mark.parametrize("values", [{"ApiType": "HTTP"}, REST_JWT], ids=["HTTP", "REST"])
def test_the_apis_invoke_the_live_alias(values: dict[str, str]) -> None:
    cfn = templates.deployed(**values)
    http, props = templates.function(cfn, HTTP_HANDLER)
    live, alias = templates.alias(cfn, http)
    assert alias["Name"] == "live"
    version = cfn["Resources"][alias["FunctionVersion"]["Fn::GetAtt"][0]]
    assert version["Type"] == "AWS::Lambda::Version" and version["Properties"]["FunctionName"] == {"Ref": http}
    kind = "AWS::ApiGatewayV2::Api" if values["ApiType"] == "HTTP" else "AWS::ApiGateway::RestApi"
    (api,) = of_type(cfn, kind).values()
    integrations = [
        operation["x-amazon-apigateway-integration"]["uri"]
        for operations in api["Properties"]["Body"]["paths"].values()
        for operation in operations.values()
    ]
    assert len(integrations) == 5  # ANY and OPTIONS /mcp, the three well-known documents
    for uri in integrations:  # `<function ARN>:live`, the alias's ARN
        assert uri == {
            "Fn::Sub": "arn:${AWS::Partition}:apigateway:${AWS::Region}:lambda:path/2015-03-31/functions/"
            f"${{{http}.Arn}}:live/invocations"
        }
    (permission,) = [
        p["Properties"]
        for p in of_type(cfn, "AWS::Lambda::Permission").values()
        if p["Properties"]["Principal"] == "apigateway.amazonaws.com" and "authorizers" not in json.dumps(p)
    ]
    assert permission["FunctionName"] == {"Ref": live}


@pytest.mark.parametrize("tracing", ["off", "on"])
def test_tracing_turns_on_x_ray_and_the_kits_spans(tracing: str) -> None:
    cfn = templates.deployed(**REST_JWT, Tracing=tracing)
    assert templates.transformed()["Parameters"]["Tracing"]["Default"] == "off"
    for handler in (HTTP_HANDLER, WORKER_HANDLER, AUTHORIZER_HANDLER):
        _, props = templates.function(cfn, handler)
        env = props["Environment"]["Variables"]
        xray = [m for m in templates.managed_policies(cfn, props) if "AWSXrayWriteOnlyAccess" in m]
        if tracing == "on":
            assert props["TracingConfig"] == {"Mode": "Active"} and env["LAMBDA_MCP_TRACING"] == "on"
            assert len(xray) == 1
        else:
            assert "TracingConfig" not in props and "LAMBDA_MCP_TRACING" not in env and not xray


def test_the_worker_batch_and_the_partition_shards_are_parameters() -> None:
    cfn = templates.deployed()
    (mapping,) = [
        m["Properties"]
        for m in of_type(cfn, "AWS::Lambda::EventSourceMapping").values()
        if m["Properties"].get("ScalingConfig", {}).get("MaximumConcurrency") == {"Ref": "WorkerMaxConcurrency"}
    ]
    assert mapping["BatchSize"] == {"Ref": "WorkerBatchSize"}
    for handler in (HTTP_HANDLER, WORKER_HANDLER):  # both write the feed; the sweeper reads the due index
        assert templates.env(cfn, handler)["LAMBDA_MCP_SHARDS"] == {"Ref": "PartitionShards"}
    spec = cfn["Parameters"]
    assert (spec["WorkerBatchSize"]["Default"], spec["WorkerBatchSize"]["MaxValue"]) == (1, 10)
    assert (spec["PartitionShards"]["Default"], spec["PartitionShards"]["MinValue"]) == (1, 1)
