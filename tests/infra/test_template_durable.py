"""template.yaml's TaskBackend=durable (issue 35), offline: tasks run as Lambda durable executions of a new function
(DurableConfig, the `live` alias, no event source), started and signalled by the HTTP function and reconciled by the
sweeper, with no queue; resolved and linted for every ApiType x AuthMode x Transport the other tests deploy, and
TaskBackend=sqs (the default) left as it was."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from samtranslator.yaml_helper import yaml_parse

from tests.infra import templates
from tests.infra.templates import AUTH_MODES, DURABLE_HANDLER, HTTP_HANDLER, WORKER_HANDLER, as_list, of_type, validate
from tests.support.processes import ROOT

DURABLE_WORKER = "DurableTaskWorkerFunction"
COMBINATIONS = [(api, mode, "buffered") for api, mode in AUTH_MODES] + [
    (api, mode, "streaming") for api, mode in AUTH_MODES if api != "HTTP"
]
"""Every ApiType x AuthMode (with the values each needs) x Transport the template takes (test_template_auth,
test_template_streaming deploy them with TaskBackend=sqs)."""
TABLE_ACTIONS = {"dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:Query"}
SIGNAL_ACTIONS = {
    "lambda:SendDurableExecutionCallbackSuccess",
    "lambda:SendDurableExecutionCallbackFailure",
    "lambda:StopDurableExecution",
}
EXECUTIONS = {
    "Fn::Sub": "arn:${AWS::Partition}:lambda:${AWS::Region}:${AWS::AccountId}:function:${" + DURABLE_WORKER + "}:*"
}
"""The worker's durable executions, under any of its versions (an execution's ARN is `<function ARN>:<version>/
durable-execution/...`): what callbacks, stops and reads are authorized on; never an unqualified function."""
ONE_YEAR_AND_A_DAY = 31_622_400  # DurableConfig.ExecutionTimeout's most (366 days)


def _values(api: str = "HTTP", mode: str = "none", transport: str = "buffered", **more: str) -> dict[str, str]:
    return {"ApiType": api, "AuthMode": mode, **AUTH_MODES[(api, mode)], "Transport": transport, **more}


def _durable(**more: str) -> dict[str, Any]:
    return templates.deployed(**_values(TaskBackend="durable", **more))


def _statements(cfn: dict[str, Any], handler: str) -> list[dict[str, Any]]:
    return templates.statements(cfn, templates.function(cfn, handler)[1])


def _actions(statements: list[dict[str, Any]]) -> set[str]:
    return {a for s in statements for a in as_list(s["Action"])}


def _alias(cfn: dict[str, Any]) -> dict[str, str]:
    live, _ = templates.alias(cfn, DURABLE_WORKER)
    return {"Ref": live}


def test_the_backend_is_sqs_by_default_and_durable_a_choice_with_a_one_day_retention() -> None:
    spec = templates.transformed()["Parameters"]
    assert spec["TaskBackend"]["Default"] == "sqs" and spec["TaskBackend"]["AllowedValues"] == ["sqs", "durable"]
    retention = spec["DurableRetentionDays"]
    assert (retention["Default"], retention["MinValue"], retention["MaxValue"]) == (1, 1, 90)  # Lambda's range
    parameters = list(yaml_parse((ROOT / "template.yaml").read_text())["Parameters"])
    assert parameters[:3] == ["AuthMode", "ApiType", "Transport"]  # asked first, still


@pytest.mark.parametrize(("api", "mode", "transport"), COMBINATIONS, ids=["-".join(c) for c in COMBINATIONS])
def test_each_combination_deploys_lint_clean_with_the_durable_backend(
    api: str, mode: str, transport: str, tmp_path: Path
) -> None:
    values = _values(api, mode, transport, TaskBackend="durable")
    assert validate.broken_rules(templates.transformed(), values) == []
    deployed = templates.deployed(**values)
    assert templates.findings(deployed, tmp_path) == []
    assert DURABLE_WORKER in deployed["Resources"] and not of_type(deployed, "AWS::SQS::Queue")


def test_the_sqs_backend_has_nothing_of_the_durable_one() -> None:
    cfn = templates.deployed()
    assert not [name for name in cfn["Resources"] if "Durable" in name]
    assert not [name for name in cfn["Outputs"] if "Durable" in name]
    assert set(of_type(cfn, "AWS::SQS::Queue")) == {"TaskQueue", "TaskDeadLetterQueue"}
    assert len(of_type(cfn, "AWS::Lambda::EventSourceMapping")) == 2
    assert "DurableConfig" not in json.dumps(cfn)
    for handler in (HTTP_HANDLER, WORKER_HANDLER):
        env = templates.env(cfn, handler)
        assert "LAMBDA_MCP_TASK_BACKEND" not in env and "LAMBDA_MCP_TASK_DURABLE_FUNCTION" not in env
        assert env["LAMBDA_MCP_TASK_QUEUE_URL"] == {"Ref": "TaskQueue"}
        assert not [a for a in _actions(_statements(cfn, handler)) if a.startswith("lambda:")]
    assert "TasksDeadLetteredAlarm" in of_type(cfn, "AWS::CloudWatch::Alarm")


def test_the_durable_worker_is_a_new_durable_function_on_the_live_alias_with_its_own_layer() -> None:
    cfn = _durable()
    name, props = templates.function(cfn, DURABLE_HANDLER)
    assert name == DURABLE_WORKER  # a function of its own: durable execution is enabled only when one is created
    sam = yaml_parse((ROOT / "template.yaml").read_text())["Resources"]
    assert sam[name]["Condition"] == "DurableBackend" and "DurableConfig" not in json.dumps(sam["TaskWorkerFunction"])
    assert sam[name]["Properties"]["CodeUri"] == sam["TaskWorkerFunction"]["Properties"]["CodeUri"]  # the app
    assert props["Runtime"] == "python3.13" and props["Architectures"] == ["arm64"]  # a durable-capable runtime
    assert props["Timeout"] == 900  # one invocation; the execution: DurableConfig
    layers = [ref["Ref"] for ref in props["Layers"]]
    # DepsLayer, KitLayer, then the SDK's (SAM suffixes each logical id with a content hash)
    assert all(ref.startswith(n) for ref, n in zip(layers, ["DepsLayer", "KitLayer", "DurableLayer"], strict=True))
    durable_layer = cfn["Resources"][layers[2]]["Properties"]
    assert durable_layer["CompatibleArchitectures"] == ["arm64"] and durable_layer["CompatibleRuntimes"] == [
        "python3.13"
    ]
    # Invoked by alias only (Lambda refuses an unqualified durable invoke); the versions executions in flight
    # replay on are kept when a deployment publishes the next.
    live, alias = templates.alias(cfn, name)
    assert alias["Name"] == "live"
    version = cfn["Resources"][alias["FunctionVersion"]["Fn::GetAtt"][0]]
    assert version["Type"] == "AWS::Lambda::Version" and version["DeletionPolicy"] == "Retain"
    assert cfn["Outputs"]["DurableTaskWorkerAliasArn"]["Value"] == {"Ref": live}
    assert cfn["Outputs"]["DurableTaskWorkerFunctionName"]["Value"] == {"Ref": name}


def test_the_execution_outlives_the_longest_task_and_keeps_its_history_for_the_retention_days() -> None:
    cfn = _durable()
    config = templates.function(cfn, DURABLE_HANDLER)[1]["DurableConfig"]
    assert set(config) == {"ExecutionTimeout", "RetentionPeriodInDays"}  # no KMSKeyArn: Lambda's own key
    longest_task = cfn["Parameters"]["TaskTtlSeconds"]["MaxValue"]
    assert longest_task + 3600 <= config["ExecutionTimeout"] <= longest_task + 86_400  # a margin, not a year
    assert config["ExecutionTimeout"] <= ONE_YEAR_AND_A_DAY
    assert config["RetentionPeriodInDays"] == {"Ref": "DurableRetentionDays"}


def test_nothing_but_the_http_function_and_the_sweeper_starts_the_durable_worker() -> None:
    cfn = _durable()
    worker, _ = templates.function(cfn, DURABLE_HANDLER)
    live = _alias(cfn)
    # No event source: an SQS mapping would end every execution at 15 minutes; no schedule, no permission.
    assert not of_type(cfn, "AWS::Lambda::EventSourceMapping") and not of_type(cfn, "AWS::SQS::Queue")
    for rule in of_type(cfn, "AWS::Events::Rule").values():
        assert all(worker not in json.dumps(t["Arn"]) for t in rule["Properties"]["Targets"])
    for permission in of_type(cfn, "AWS::Lambda::Permission").values():
        assert permission["Properties"]["FunctionName"] not in ({"Ref": worker}, live)
    # The sweeper stays, on its schedule, on the old worker function, without its queues.
    sweeper, _ = templates.function(cfn, WORKER_HANDLER)
    (rule,) = of_type(cfn, "AWS::Events::Rule").values()
    assert rule["Properties"]["ScheduleExpression"] == "rate(5 minutes)"
    sweeper_live, _ = templates.alias(cfn, sweeper)  # its `live` alias (test_template_snapstart)
    assert [t["Arn"] for t in rule["Properties"]["Targets"]] == [{"Ref": sweeper_live}]


def test_the_http_function_and_the_sweeper_are_told_the_backend_and_the_workers_alias() -> None:
    cfn = _durable()
    live = _alias(cfn)
    for handler in (HTTP_HANDLER, WORKER_HANDLER):
        env = templates.env(cfn, handler)
        assert env["LAMBDA_MCP_TASK_BACKEND"] == "durable"
        assert env["LAMBDA_MCP_TASK_DURABLE_FUNCTION"] == live  # the qualified ARN, `<function ARN>:live`
        assert "LAMBDA_MCP_TASK_QUEUE_URL" not in env and "LAMBDA_MCP_TASK_DLQ_ARN" not in env
        assert env["LAMBDA_MCP_TASK_MAX_TTL_SECONDS"] == {"Ref": "TaskTtlSeconds"}
    worker = templates.env(cfn, DURABLE_HANDLER)
    assert worker["LAMBDA_MCP_TASK_BACKEND"] == "durable"
    assert worker["LAMBDA_MCP_APP"] == {"Ref": "AppPath"} and worker["LAMBDA_MCP_TABLE_NAME"] == {"Ref": "StateTable"}
    assert worker["LAMBDA_MCP_TASK_MAX_TTL_SECONDS"] == {"Ref": "TaskTtlSeconds"}
    assert worker["LAMBDA_MCP_SHARDS"] == {"Ref": "PartitionShards"}
    assert worker["POWERTOOLS_SERVICE_NAME"] == {"Ref": "AWS::StackName"}  # its metrics where the alarms look
    assert not [n for n in worker if n.startswith(("LAMBDA_MCP_STATE_KEY", "LAMBDA_MCP_TASK_QUEUE"))]


def test_the_http_function_may_start_the_alias_and_signal_only_the_workers_executions() -> None:
    cfn = _durable()
    statements = _statements(cfn, HTTP_HANDLER)
    assert _actions(statements) == TABLE_ACTIONS | SIGNAL_ACTIONS | {
        "lambda:InvokeFunction",
        "secretsmanager:GetSecretValue",
    }
    (start,) = [s for s in statements if "lambda:InvokeFunction" in as_list(s["Action"])]
    assert as_list(start["Action"]) == ["lambda:InvokeFunction"] and as_list(start["Resource"]) == [_alias(cfn)]
    (signal,) = [s for s in statements if set(as_list(s["Action"])) & SIGNAL_ACTIONS]
    assert set(as_list(signal["Action"])) == SIGNAL_ACTIONS and as_list(signal["Resource"]) == [EXECUTIONS]
    assert not _actions(statements) & {"lambda:GetDurableExecution", "sqs:SendMessage"}  # clients poll the table


def test_the_sweeper_may_also_read_the_executions_and_has_no_queue() -> None:
    cfn = _durable()
    statements = _statements(cfn, WORKER_HANDLER)
    assert _actions(statements) == TABLE_ACTIONS | SIGNAL_ACTIONS | {
        "lambda:InvokeFunction",
        "lambda:GetDurableExecution",
    }
    (start,) = [s for s in statements if "lambda:InvokeFunction" in as_list(s["Action"])]
    assert as_list(start["Action"]) == ["lambda:InvokeFunction"] and as_list(start["Resource"]) == [_alias(cfn)]
    (reconcile,) = [s for s in statements if "lambda:GetDurableExecution" in as_list(s["Action"])]
    assert set(as_list(reconcile["Action"])) == SIGNAL_ACTIONS | {"lambda:GetDurableExecution"}
    assert as_list(reconcile["Resource"]) == [EXECUTIONS]


@pytest.mark.parametrize("tracing", ["off", "on"])
def test_the_durable_workers_role_is_the_durable_policy_and_the_table(tracing: str) -> None:
    cfn = _durable(Tracing=tracing)
    _, props = templates.function(cfn, DURABLE_HANDLER)
    managed = templates.managed_policies(cfn, props)
    # What SAM gives a DurableConfig function: logs, and checkpoints of its own executions.
    assert "AWSLambdaBasicDurableExecutionRolePolicy" in managed[0]
    assert not [m for m in managed if "AWSLambdaBasicExecutionRole" in m]
    assert len(managed) == (2 if tracing == "on" else 1)
    assert all("AWSXrayWriteOnlyAccess" in m for m in managed[1:])
    (table,) = templates.statements(cfn, props)
    assert set(as_list(table["Action"])) == TABLE_ACTIONS
    assert as_list(table["Resource"]) == [
        {"Fn::GetAtt": ["StateTable", "Arn"]},
        {"Fn::Sub": "${StateTable.Arn}/index/*"},
    ]


def test_every_durable_statement_is_least_privilege() -> None:
    cfn = _durable(ApiType="REST", AuthMode="jwt")
    for role in of_type(cfn, "AWS::IAM::Role").values():
        for policy in role["Properties"].get("Policies", []):
            for statement in policy["PolicyDocument"]["Statement"]:
                assert statement["Effect"] == "Allow"
                assert not any("*" in a for a in as_list(statement["Action"])), statement
                resources = json.dumps(statement["Resource"])
                # a table's indexes, or the durable worker's executions; nothing else with a wildcard
                assert "*" not in resources.replace("/index/*", "").replace(json.dumps(EXECUTIONS)[1:-1], "")


def test_reserved_concurrency_caps_the_durable_worker_not_the_sweeper() -> None:
    unreserved = _durable()
    for handler in (DURABLE_HANDLER, WORKER_HANDLER):
        assert "ReservedConcurrentExecutions" not in templates.function(unreserved, handler)[1]
    reserved = _durable(WorkerReservedConcurrency="15")
    durable = templates.function(reserved, DURABLE_HANDLER)[1]
    assert durable["ReservedConcurrentExecutions"] == {"Ref": "WorkerReservedConcurrency"}
    assert "ReservedConcurrentExecutions" not in templates.function(reserved, WORKER_HANDLER)[1]
    sqs = templates.deployed(WorkerReservedConcurrency="15")
    assert templates.function(sqs, WORKER_HANDLER)[1]["ReservedConcurrentExecutions"] == {
        "Ref": "WorkerReservedConcurrency"
    }


def test_the_durable_worker_logs_with_the_retention_and_has_its_alarms_instead_of_the_dead_letter_one() -> None:
    cfn = _durable(AlarmEmail="ops@example.com")
    worker, _ = templates.function(cfn, DURABLE_HANDLER)
    groups = [g["Properties"] for g in of_type(cfn, "AWS::Logs::LogGroup").values()]
    assert {
        "LogGroupName": {"Fn::Sub": f"/aws/lambda/${{{worker}}}"},
        "RetentionInDays": {"Ref": "LogRetentionDays"},
    } in groups
    alarms = {name: a["Properties"] for name, a in of_type(cfn, "AWS::CloudWatch::Alarm").items()}
    assert "TasksDeadLetteredAlarm" not in alarms  # no dead-letter queue
    for name, metric in (("DurableWorkerErrorsAlarm", "Errors"), ("DurableWorkerThrottlesAlarm", "Throttles")):
        alarm = alarms[name]
        assert (alarm["Namespace"], alarm["MetricName"]) == ("AWS/Lambda", metric)
        assert alarm["Dimensions"] == [{"Name": "FunctionName", "Value": {"Ref": worker}}]
        assert alarm["AlarmActions"] and alarm["TreatMissingData"] == "notBreaching"
    assert {"WorkerErrorsAlarm", "TasksExpiredAlarm"} <= set(alarms)  # the sweeper's, still
    assert "TaskQueueUrl" not in cfn["Outputs"] and "TaskDeadLetterQueueUrl" not in cfn["Outputs"]


def test_the_validator_catches_an_execution_timeout_out_of_lambdas_range(tmp_path: Path) -> None:
    """cfn-lint checks DurableConfig's ranges on the translated template only (not on the SAM one)."""
    bad = tmp_path / "template.yaml"
    bad.write_text(
        (ROOT / "template.yaml").read_text().replace("ExecutionTimeout: 608400", "ExecutionTimeout: 40000000")
    )
    done = subprocess.run(
        [sys.executable, str(ROOT / "infra/validate_template.py"), str(bad), "--out", str(tmp_path / "out.json")],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
    )
    assert done.returncode == 1 and "E3034" in done.stdout, done.stdout
