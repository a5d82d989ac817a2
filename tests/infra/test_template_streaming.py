"""template.yaml's Transport=streaming (issue 27), offline: the HTTP function behind the Lambda Web Adapter, the
function URL in RESPONSE_STREAM mode and the REST API's integrations in STREAM mode, resolved and linted for every
valid ApiType x AuthMode; the HTTP API refused by the template's Rules; buffered left as it was."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from samtranslator.yaml_helper import yaml_parse

from tests.infra import templates
from tests.infra.templates import AUTH_MODES, HTTP_HANDLER, WORKER_HANDLER, of_type, validate
from tests.support.processes import ROOT

STREAMING = [(api, mode) for api, mode in AUTH_MODES if api != "HTTP"]
PINNED_LAYER = "arn:${AWS::Partition}:lambda:${AWS::Region}:753240598075:layer:LambdaAdapterLayerArm64:30"
ADAPTER_ENV = {
    "AWS_LAMBDA_EXEC_WRAPPER": "/opt/bootstrap",  # the layer's wrapper: it execs the handler, run.sh
    "AWS_LWA_INVOKE_MODE": "response_stream",
    "PORT": "8080",
    "AWS_LWA_READINESS_CHECK_PATH": "/healthz",  # `lambda-mcp serve` answers it once the app is loaded
}
STREAM_URI = (
    "arn:${AWS::Partition}:apigateway:${AWS::Region}:lambda:path/2021-11-15/functions/"
    "${McpHttpFunction.Arn}:live/response-streaming-invocations"
)


def _values(api: str, mode: str, transport: str) -> dict[str, str]:
    return {"ApiType": api, "AuthMode": mode, **AUTH_MODES[(api, mode)], "Transport": transport}


def _http_function(cfn: dict[str, Any]) -> dict[str, Any]:
    (props,) = [
        r["Properties"]
        for r in of_type(cfn, "AWS::Lambda::Function").values()
        if r["Properties"]["Handler"] in (HTTP_HANDLER, "run.sh")
    ]
    found: dict[str, Any] = props
    return found


def _without_integrations(body: dict[str, Any]) -> dict[str, Any]:
    paths = {
        path: {
            verb: {k: v for k, v in op.items() if k != "x-amazon-apigateway-integration"} for verb, op in ops.items()
        }
        for path, ops in body["paths"].items()
    }
    return {**body, "paths": paths}


def test_transport_defaults_to_buffered_with_a_pinned_adapter_layer_and_a_15_minute_cap() -> None:
    spec = templates.transformed()["Parameters"]
    assert spec["Transport"]["Default"] == "buffered" and spec["Transport"]["AllowedValues"] == [
        "buffered",
        "streaming",
    ]
    assert (spec["StreamingTimeout"]["Default"], spec["StreamingTimeout"]["MaxValue"]) == (900, 900)
    assert spec["WebAdapterLayerArn"]["Default"] == ""  # empty: the pinned public layer of the stack's region
    assert "LambdaAdapterLayerArm64:30" in spec["WebAdapterLayerArn"]["Description"]


def test_the_rules_refuse_streaming_over_the_http_api() -> None:
    cfn = templates.transformed()
    (broken,) = validate.broken_rules(cfn, _values("HTTP", "none", "streaming"))
    assert "Transport=streaming needs ApiType=REST or URL" in broken and "HTTP API cannot stream" in broken
    assert validate.broken_rules(cfn, _values("HTTP", "none", "buffered")) == []
    for api, mode in STREAMING:
        assert validate.broken_rules(cfn, _values(api, mode, "streaming")) == [], (api, mode)


@pytest.mark.parametrize(("api", "mode"), STREAMING, ids=[f"{a}-{m}" for a, m in STREAMING])
def test_each_streaming_combination_deploys_lint_clean_behind_the_web_adapter(
    api: str, mode: str, tmp_path: Path
) -> None:
    streaming = templates.deployed(**_values(api, mode, "streaming"))
    assert templates.findings(streaming, tmp_path) == []
    buffered = templates.deployed(**_values(api, mode, "buffered"))
    function, before = _http_function(streaming), _http_function(buffered)
    assert function["Handler"] == "run.sh" and before["Handler"] == HTTP_HANDLER
    assert function["Timeout"] == {"Ref": "StreamingTimeout"} and before["Timeout"] == 29
    assert function["Layers"] == [*before["Layers"], {"Fn::Sub": PINNED_LAYER}]
    env, old = function["Environment"]["Variables"], before["Environment"]["Variables"]
    assert env == {**old, **ADAPTER_ENV}  # the kit's settings (auth included) as buffered, plus LWA's
    assert not ADAPTER_ENV.keys() & old.keys()
    # The worker never streams: it is the same function either way.
    assert templates.function(streaming, WORKER_HANDLER)[1] == templates.function(buffered, WORKER_HANDLER)[1]
    assert not [r for r in streaming["Resources"].values() if r["Type"].startswith("AWS::ApiGatewayV2")]
    if api == "URL":
        (url,) = of_type(streaming, "AWS::Lambda::Url").values()
        (old_url,) = of_type(buffered, "AWS::Lambda::Url").values()
        assert url["Properties"] == {**old_url["Properties"], "InvokeMode": "RESPONSE_STREAM"}
        assert old_url["Properties"]["InvokeMode"] == "BUFFERED"
        return
    (rest,) = of_type(streaming, "AWS::ApiGateway::RestApi").values()
    (old_rest,) = of_type(buffered, "AWS::ApiGateway::RestApi").values()
    body, old_body = rest["Properties"]["Body"], old_rest["Properties"]["Body"]
    # Only the integrations change: the authorizers, their gateway responses and the routes stay.
    assert _without_integrations(body) == _without_integrations(old_body)
    integrations = [op["x-amazon-apigateway-integration"] for ops in body["paths"].values() for op in ops.values()]
    # ANY and OPTIONS /mcp, the three well-known documents (and the facade's two routes): the function streams all
    assert len(integrations) == (7 if mode in templates.FACADE_MODES else 5)
    for integration in integrations:
        assert integration == {
            "type": "aws_proxy",
            "httpMethod": "POST",
            "uri": {"Fn::Sub": STREAM_URI},
            "responseTransferMode": "STREAM",
            "timeoutInMillis": 900000,  # >= any StreamingTimeout: the function's own timeout ends a call first
            "passthroughBehavior": "when_no_match",
        }
    old_integration = old_body["paths"]["/mcp"]["x-amazon-apigateway-any-method"]["x-amazon-apigateway-integration"]
    assert "responseTransferMode" not in old_integration and "timeoutInMillis" not in old_integration
    assert old_integration["uri"]["Fn::Sub"].endswith(":live/invocations")


def test_a_layer_arn_given_replaces_the_pinned_one() -> None:
    mine = "arn:aws:lambda:eu-west-1:123456789012:layer:MyAdapter:3"
    cfn = templates.deployed(ApiType="URL", Transport="streaming", WebAdapterLayerArn=mine)
    assert _http_function(cfn)["Layers"][2:] == [{"Ref": "WebAdapterLayerArn"}]
    assert cfn["Parameters"]["WebAdapterLayerArn"]["Default"] == mine


@pytest.mark.parametrize("code", ["examples/weather/", "src/lambda_mcp/scaffold/project/app/"])
def test_the_streaming_handler_is_an_executable_script_in_the_code_folder(code: str) -> None:
    """LWA's wrapper execs $LAMBDA_TASK_ROOT/$_HANDLER: `run.sh` must be in the code folder, executable, LF."""
    sam = yaml_parse((ROOT / "template.yaml").read_text())["Resources"]["McpHttpFunction"]["Properties"]
    assert sam["Handler"] == {"Fn::If": ["Streaming", "run.sh", HTTP_HANDLER]}
    run = ROOT / code / "run.sh"
    assert os.access(run, os.X_OK) and b"\r" not in run.read_bytes()
    assert run.read_text().startswith("#!/bin/sh\n") and "lambda_mcp serve" in run.read_text()


def test_buffered_sets_nothing_of_the_adapter() -> None:
    for api in ("HTTP", "REST", "URL"):
        env = templates.env(templates.deployed(ApiType=api), HTTP_HANDLER)
        assert not [name for name in env if name.startswith("AWS_LWA") or name in ADAPTER_ENV], api
    assert "753240598075" not in json.dumps(templates.deployed(ApiType="URL")["Resources"])
