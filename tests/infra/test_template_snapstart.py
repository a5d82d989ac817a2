"""template.yaml's SnapStart=on (issue 40), offline: Lambda SnapStart on the functions that run the app, each
invoked through its `live` alias (every API type, the function URL, the task queue's mappings and the sweeper's
schedule), resolved and linted in every combination of ApiType x AuthMode x TaskBackend; the streaming transport
refused by a Rule (and by `lambda-mcp check`); nothing Lambda refuses with SnapStart set anywhere; SnapStart=off (the
default) left as it was."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from lambda_mcp.check import Deployment, load_template, problems
from tests.infra import templates
from tests.infra.templates import AUTH_MODES, DURABLE_HANDLER, HTTP_HANDLER, WORKER_HANDLER, of_type, validate
from tests.support.processes import ROOT

SNAPSTART = {"ApplyOn": "PublishedVersions"}
COMBINATIONS = [(api, mode, backend) for api, mode in AUTH_MODES for backend in ("sqs", "durable")]
"""Every ApiType x AuthMode (with the values each needs) x TaskBackend; Transport=buffered, which SnapStart needs."""
REFUSED = "SnapStart=on needs Transport=buffered"


def _values(api: str = "HTTP", mode: str = "none", backend: str = "sqs", **more: str) -> dict[str, str]:
    return {"ApiType": api, "AuthMode": mode, **AUTH_MODES[(api, mode)], "TaskBackend": backend, **more}


def _alias(cfn: dict[str, Any], handler: str) -> tuple[str, dict[str, str]]:
    """A function's logical id, and a Ref to its one alias (`live`)."""
    name, _ = templates.function(cfn, handler)
    live, alias = templates.alias(cfn, name)
    assert alias["Name"] == "live"
    return name, {"Ref": live}


def _snapstarted(cfn: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {
        name: r["Properties"]
        for name, r in of_type(cfn, "AWS::Lambda::Function").items()
        if "SnapStart" in r["Properties"]
    }


def test_snapstart_is_off_by_default() -> None:
    spec = templates.transformed()["Parameters"]["SnapStart"]
    assert spec["Default"] == "off" and sorted(spec["AllowedValues"]) == ["off", "on"]
    for backend in ("sqs", "durable"):
        assert not _snapstarted(templates.deployed(**_values(backend=backend)))


@pytest.mark.parametrize(("api", "mode", "backend"), COMBINATIONS, ids=["-".join(c) for c in COMBINATIONS])
def test_each_combination_deploys_lint_clean_with_snapstart_on_the_live_aliases(
    api: str, mode: str, backend: str, tmp_path: Path
) -> None:
    values = _values(api, mode, backend, SnapStart="on")
    assert validate.broken_rules(templates.transformed(), values) == []
    cfn = templates.deployed(**values)
    assert templates.findings(cfn, tmp_path) == []
    runs_tasks = DURABLE_HANDLER if backend == "durable" else WORKER_HANDLER
    http, http_alias = _alias(cfn, HTTP_HANDLER)
    worker, worker_alias = _alias(cfn, WORKER_HANDLER)
    expected = {http, worker} | ({_alias(cfn, runs_tasks)[0]} if backend == "durable" else set())
    snapstarted = _snapstarted(cfn)
    assert set(snapstarted) == expected  # the functions that run the app, and no other (authorizer, AgentCore)
    assert all(props["SnapStart"] == SNAPSTART for props in snapstarted.values())
    # The front door invokes the HTTP function's alias, never the function ($LATEST, which has no snapshot).
    permissions = [p["Properties"] for p in of_type(cfn, "AWS::Lambda::Permission").values()]
    to_http = [p for p in permissions if p["FunctionName"] in ({"Ref": http}, http_alias)]
    assert all(p["FunctionName"] == http_alias for p in to_http)
    assert to_http or (api, mode) == ("URL", "iam")  # an IAM-authenticated URL: the callers' policies decide
    if api == "URL":
        (url,) = of_type(cfn, "AWS::Lambda::Url").values()
        assert url["Properties"]["TargetFunctionArn"] == http_alias
    else:
        kind = "AWS::ApiGatewayV2::Api" if api == "HTTP" else "AWS::ApiGateway::RestApi"
        (gateway,) = of_type(cfn, kind).values()
        body = gateway["Properties"]["Body"]
        uris = [op["x-amazon-apigateway-integration"]["uri"] for ops in body["paths"].values() for op in ops.values()]
        assert uris and all(":live/invocations" in json.dumps(uri) for uri in uris)
    # The tasks' event sources invoke the worker's alias: the queue mappings and the sweeper's schedule.
    mappings = [m["Properties"] for m in of_type(cfn, "AWS::Lambda::EventSourceMapping").values()]
    assert len(mappings) == (2 if backend == "sqs" else 0)
    assert all(m["FunctionName"] == worker_alias for m in mappings)
    (rule,) = of_type(cfn, "AWS::Events::Rule").values()
    assert [t["Arn"] for t in rule["Properties"]["Targets"]] == [worker_alias]
    if backend == "durable":  # executions start on the durable worker's alias, as before
        _, durable_alias = _alias(cfn, DURABLE_HANDLER)
        assert templates.env(cfn, HTTP_HANDLER)["LAMBDA_MCP_TASK_DURABLE_FUNCTION"] == durable_alias


def test_turning_snapstart_on_publishes_new_versions() -> None:
    """SAM hashes SnapStart into each version's logical id: turning it on publishes versions Lambda snapshots
    (an existing version is never snapshotted), and the aliases move to them."""
    for backend, handlers in (("sqs", (HTTP_HANDLER, WORKER_HANDLER)), ("durable", (HTTP_HANDLER, DURABLE_HANDLER))):
        off, on = (
            templates.deployed(**_values(backend=backend)),
            templates.deployed(**_values(backend=backend, SnapStart="on")),
        )
        for handler in handlers:
            versions = [
                templates.alias(cfn, templates.function(cfn, handler)[0])[1]["FunctionVersion"] for cfn in (off, on)
            ]
            assert versions[0] != versions[1], handler


def test_off_keeps_the_queue_mappings_on_the_function_where_cfn_lint_checks_the_visibility_timeout() -> None:
    cfn = templates.deployed(**_values())
    worker, worker_alias = _alias(cfn, WORKER_HANDLER)  # the alias exists either way (the schedule uses it)
    mappings = [m["Properties"] for m in of_type(cfn, "AWS::Lambda::EventSourceMapping").values()]
    assert len(mappings) == 2 and all(m["FunctionName"] == {"Ref": worker} for m in mappings)
    (rule,) = of_type(cfn, "AWS::Events::Rule").values()
    assert [t["Arn"] for t in rule["Properties"]["Targets"]] == [worker_alias]


@pytest.mark.parametrize(("api", "mode"), [(a, m) for a, m in AUTH_MODES if a != "HTTP"])
def test_the_rules_and_the_check_refuse_snapstart_with_the_streaming_transport(api: str, mode: str) -> None:
    """`lambda-mcp serve` behind the Lambda Web Adapter is a process of its own: the kit's hooks never reach it."""
    cfn = templates.transformed()
    streaming = _values(api, mode, SnapStart="on", Transport="streaming")
    (broken,) = validate.broken_rules(cfn, streaming)
    assert REFUSED in broken and "lambda-mcp serve" in broken
    assert validate.broken_rules(cfn, {**streaming, "SnapStart": "off"}) == []
    template = load_template(ROOT / "template.yaml")
    (found,) = problems(template, Deployment(ROOT / "template.yaml", streaming, "--parameter-overrides"))
    assert found.startswith(REFUSED)
    assert problems(template, Deployment(ROOT / "template.yaml", {**streaming, "Transport": "buffered"}, "x")) == []


def test_nothing_lambda_refuses_with_snapstart_is_set_on_a_snapstarted_function() -> None:
    """Lambda refuses SnapStart with provisioned concurrency, Amazon EFS, ephemeral storage above 512 MB, container
    images and runtimes other than Java 11+, Python 3.12+ and .NET 8+ (AWS Lambda Developer Guide, "Improving
    startup performance with Lambda SnapStart"). No parameter of the template sets any of them: this keeps it so."""
    for backend in ("sqs", "durable"):
        for api in ("HTTP", "REST", "URL"):
            cfn = templates.deployed(**_values(api, backend=backend, SnapStart="on"))
            for name, props in _snapstarted(cfn).items():
                runtime = props["Runtime"]
                assert runtime.startswith("python3.") and int(runtime.split(".")[1]) >= 12, name
                assert props.get("PackageType", "Zip") == "Zip" and "FileSystemConfigs" not in props, name
                assert props.get("EphemeralStorage", {"Size": 512})["Size"] <= 512, name
            for alias in of_type(cfn, "AWS::Lambda::Alias").values():
                assert "ProvisionedConcurrencyConfig" not in alias["Properties"]
            assert not of_type(cfn, "AWS::Lambda::Version") or all(
                "ProvisionedConcurrencyConfig" not in v["Properties"]
                for v in of_type(cfn, "AWS::Lambda::Version").values()
            )
