"""template.yaml's WafRateLimit, offline: an AWS WAF web ACL with one rate-based rule (per source IP, scoped down to
the authorization facade's /oauth/ paths) on the REST API's stage, only where it can work: ApiType=REST (AWS WAF
protects REST API stages, not HTTP APIs or function URLs) with AuthMode=cognito or proxy (the facade's routes)."""

from __future__ import annotations

import json
import posixpath
import re
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import pytest

from tests.infra import templates
from tests.infra.builds import sam_routes
from tests.infra.templates import AUTH_MODES, FACADE_MODES, of_type, validate
from tests.support.processes import ROOT

WAF_TYPES = ("AWS::WAFv2::WebACL", "AWS::WAFv2::WebACLAssociation")
FACADE_ENDPOINTS = ("register", "authorize", "consent", "callback", "token", "revoke", "jwks")
LIMIT = "100"


def _values(api: str, mode: str, **more: str) -> dict[str, str]:
    return {"ApiType": api, "AuthMode": mode, **AUTH_MODES[(api, mode)], **more}


def _waf(cfn: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {name: r for name, r in cfn["Resources"].items() if r["Type"] in WAF_TYPES}


def _web_acl(mode: str, **more: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """The deployed template for REST + mode with the rate limit on, and its one web ACL's properties."""
    cfn = templates.deployed(**_values("REST", mode, WafRateLimit=LIMIT, **more))
    ((_, acl),) = of_type(cfn, "AWS::WAFv2::WebACL").items()
    return cfn, acl["Properties"]


def _inspected(path: str, transformations: list[dict[str, Any]]) -> str:
    """A URI path as the rule's text transformations leave it (the two the template uses)."""
    for transformation in sorted(transformations, key=lambda t: t["Priority"]):
        if transformation["Type"] == "URL_DECODE":
            path = unquote(path)
        elif transformation["Type"] == "NORMALIZE_PATH":  # multiple slashes, ./ and ../ removed
            path = posixpath.normpath(path) + ("/" if path.endswith("/") else "")
        else:
            raise AssertionError(f"unexpected transformation {transformation}")
    return path


def test_the_limit_is_off_by_default_and_only_zero_or_what_waf_accepts_passes_the_pattern() -> None:
    spec = templates.transformed()["Parameters"]["WafRateLimit"]
    assert spec["Default"] == "0"
    pattern = re.compile(spec["AllowedPattern"])  # CloudFormation matches the whole value
    for value in ("0", "10", "11", "100", "2000", "999999999", "1000000000", "1999999999", "2000000000"):
        assert pattern.fullmatch(value), value
    for value in ("", "1", "9", "00", "010", "-10", "1e3", "100.0", " 100", "2000000001", "9999999999"):
        assert not pattern.fullmatch(value), value
    assert "10" in spec["ConstraintDescription"] and "/oauth/" in spec["Description"]


@pytest.mark.parametrize(("api", "mode"), list(AUTH_MODES), ids=[f"{a}-{m}" for a, m in AUTH_MODES])
def test_no_web_acl_without_a_limit(api: str, mode: str) -> None:
    cfn = templates.deployed(**_values(api, mode))
    assert _waf(cfn) == {} and "FacadeWebAclArn" not in cfn["Outputs"]


@pytest.mark.parametrize(("api", "mode"), list(AUTH_MODES), ids=[f"{a}-{m}" for a, m in AUTH_MODES])
def test_the_rules_refuse_a_limit_where_waf_cannot_protect_the_facade(api: str, mode: str) -> None:
    cfn = templates.transformed()
    broken = validate.broken_rules(cfn, _values(api, mode, WafRateLimit=LIMIT))
    expected = []
    if api != "REST":  # an HTTP API stage or a function URL cannot have a web ACL
        expected.append("WafRateLimit needs ApiType=REST")
    if mode not in FACADE_MODES:  # no /oauth/ routes to limit
        expected.append("WafRateLimit needs AuthMode=cognito or proxy")
    assert len(broken) == len(expected), broken
    for found, words in zip(broken, expected, strict=True):
        assert found.startswith("Rule WafNeedsTheRestApiAndTheFacade: " + words), found
    assert validate.broken_rules(cfn, _values(api, mode, WafRateLimit="0")) == []
    # Even without the rule (e.g. a changed template), the web ACL only exists where it can work.
    assert bool(_waf(templates.deployed(**_values(api, mode, WafRateLimit=LIMIT)))) == (not expected)


@pytest.mark.parametrize(
    ("mode", "transport"), [("cognito", "buffered"), ("proxy", "buffered"), ("cognito", "streaming")]
)
def test_a_limit_deploys_lint_clean_on_the_rest_api(mode: str, transport: str, tmp_path: Path) -> None:
    cfn, _ = _web_acl(mode, Transport=transport)
    assert templates.findings(cfn, tmp_path) == []
    assert set(_waf(cfn)) == {"FacadeWebAcl", "FacadeWebAclAssociation"}
    assert cfn["Outputs"]["FacadeWebAclArn"]["Value"] == {"Fn::GetAtt": ["FacadeWebAcl", "Arn"]}


@pytest.mark.parametrize("mode", FACADE_MODES)
def test_the_web_acl_blocks_an_address_over_the_limit_and_allows_the_rest(mode: str) -> None:
    cfn, acl = _web_acl(mode)
    assert acl["Scope"] == "REGIONAL" and acl["DefaultAction"] == {"Allow": {}}
    (rule,) = acl["Rules"]
    assert rule["Action"] == {"Block": {}}
    statement = rule["Statement"]["RateBasedStatement"]
    assert statement["Limit"] == {"Ref": "WafRateLimit"}
    assert cfn["Parameters"]["WafRateLimit"]["Default"] == LIMIT
    assert statement["AggregateKeyType"] == "IP"  # the caller's address, not a header it could set
    assert statement["EvaluationWindowSec"] == 300  # the parameter says "in 5 minutes"
    for visibility in (acl["VisibilityConfig"], rule["VisibilityConfig"]):  # CloudWatch metrics, sampled requests
        assert visibility["CloudWatchMetricsEnabled"] is True and visibility["SampledRequestsEnabled"] is True
    assert acl["VisibilityConfig"]["MetricName"] == {"Fn::Sub": "${AWS::StackName}-facade"}  # one per stack


@pytest.mark.parametrize("mode", FACADE_MODES)
def test_the_rule_counts_the_facade_routes_only(mode: str) -> None:
    """The scope-down statement, applied as WAF would to each route of the REST API as a client requests it (on
    the execute-api domain with the stage, on a custom domain without): the facade's /oauth/ endpoints count,
    /mcp and the metadata documents do not."""
    cfn, acl = _web_acl(mode)
    (rule,) = acl["Rules"]
    match = rule["Statement"]["RateBasedStatement"]["ScopeDownStatement"]["ByteMatchStatement"]
    assert match["FieldToMatch"] == {"UriPath": {}} and match["PositionalConstraint"] == "CONTAINS"
    transformations = match["TextTransformations"]
    assert [t["Type"] for t in sorted(transformations, key=lambda t: t["Priority"])] == ["URL_DECODE", "NORMALIZE_PATH"]
    (rest,) = of_type(cfn, "AWS::ApiGateway::RestApi").values()
    paths = list(rest["Properties"]["Body"]["paths"])
    assert "/oauth/{proxy+}" in paths and len(paths) == 6
    requested = {
        path.replace("{proxy+}", endpoint): path.startswith("/oauth/")
        for path in paths
        for endpoint in FACADE_ENDPOINTS
    }
    for path, counted in requested.items():
        for prefix in ("/v1", ""):
            inspected = _inspected(prefix + path, transformations)
            assert (match["SearchString"] in inspected) == counted, (prefix + path, inspected)
    for evasive in ("/v1/%6Fauth/token", "/v1//oauth/register", "/v1/x/../oauth/authorize"):
        assert match["SearchString"] in _inspected(evasive, transformations), evasive


def test_the_web_acl_is_associated_with_the_rest_api_stage() -> None:
    cfn, _ = _web_acl("cognito")
    association = cfn["Resources"]["FacadeWebAclAssociation"]["Properties"]
    assert association["WebACLArn"] == {"Fn::GetAtt": ["FacadeWebAcl", "Arn"]}
    ((rest, _),) = of_type(cfn, "AWS::ApiGateway::RestApi").items()
    ((stage, props),) = of_type(cfn, "AWS::ApiGateway::Stage").items()
    assert props["Properties"]["RestApiId"] == {"Ref": rest} and props["Properties"]["StageName"] == "v1"
    # arn:<partition>:apigateway:<region>::/restapis/<api id>/stages/<stage name>, the stage by reference, so
    # that CloudFormation associates it once the stage exists.
    assert association["ResourceArn"] == {
        "Fn::Sub": f"arn:${{AWS::Partition}}:apigateway:${{AWS::Region}}::/restapis/${{{rest}}}/stages/${{{stage}}}"
    }


def test_sam_cli_reads_the_template_with_a_limit_and_finds_the_same_routes(sam_env: dict[str, str]) -> None:
    """SAM CLI (sam local start-api's route discovery) takes the template with the web ACL as before: the
    facade's routes stay invisible to it (it cannot decide their conditions; docs/deploy.md)."""
    combinations = [_values("REST", mode, WafRateLimit=LIMIT) for mode in FACADE_MODES]
    requests: list[dict[str, object]] = [
        {"template": str(ROOT / "template.yaml"), "parameters": c} for c in combinations
    ]
    for combination, found in zip(combinations, sam_routes(requests, sam_env), strict=True):
        assert isinstance(found, list), (combination, found)
        assert {r["function"] for r in found} == {"McpHttpFunction"}, combination
        assert "/mcp" in {r["path"] for r in found}, json.dumps(found)
