"""Validate a SAM template offline: transform it with aws-sam-translator, then cfn-lint the CloudFormation.

Usage: python infra/validate_template.py [template.yaml] [--out build/template.cfn.json] [--param Key=Value ...]

With `--param`, the CloudFormation is also resolved for those parameter values (conditions evaluated,
`Fn::If` branches chosen, resources and outputs whose condition is false dropped), as CloudFormation
would deploy it, and that deployment is linted too: one run per combination of, say, AuthMode and ApiType.
The template's Rules are checked for those values as well: a rule they break is a finding.
A template that lists the `AWS::LanguageExtensions` transform (before the SAM one) is first resolved the
way that transform does in CloudFormation: its `Fn::If`s are decided for those values before the SAM
transform sees the template, which matters where SAM reads a property itself (e.g. a function's
`Tracing` decides whether SAM attaches the X-Ray policy).

Why both steps: cfn-lint >= 1.54 (and `sam validate --lint`) no longer lints what SAM resources
become, so bugs in functions, event sources and their wiring pass unseen on the SAM template.
Linting the translator's output catches them. No AWS account, credentials or network needed.
Also lints the SAM template itself (its schema). Prints each finding and `N findings`; exits 0
only when there are none.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
# The translator counts what it did for a metrics publisher nobody runs here, and warns about it on exit.
logging.getLogger("samtranslator.metrics.metrics").setLevel(logging.ERROR)
LOCAL_URI_KEYS = ("CodeUri", "ContentUri", "DefinitionUri")


class _OfflinePolicyLoader:
    """Managed policy names resolve from the translator's bundled map; nothing is fetched from IAM."""

    def load(self) -> dict[str, str]:
        return {}


LANGUAGE_EXTENSIONS = "AWS::LanguageExtensions"


def to_cloudformation(template_path: Path, values: dict[str, str] | None = None) -> dict[str, Any]:
    """The CloudFormation that `sam deploy` would submit, with local code paths as S3 placeholders.

    With `values` (parameter values; the others take their defaults), the SAM transform gets them as
    CloudFormation gives them, after `AWS::LanguageExtensions` (when the template lists it) decided
    every `Fn::If`. Without, the template is transformed as it is, every condition left open.
    """
    from samtranslator.public.exceptions import InvalidDocumentException
    from samtranslator.translator.transform import transform
    from samtranslator.yaml_helper import yaml_parse

    template = yaml_parse(template_path.read_text(encoding="utf-8"))
    if values is not None and LANGUAGE_EXTENSIONS in _as_list(template.get("Transform")):
        template = language_extensions(template, values)
    for name, resource in template.get("Resources", {}).items():
        properties = resource.get("Properties") or {}
        for key in LOCAL_URI_KEYS:  # what `sam package` does: local paths -> uploaded S3 objects
            value = properties.get(key)
            if isinstance(value, str) and not value.startswith("s3://"):
                properties[key] = f"s3://placeholder-bucket/{name}.zip"
    try:
        result: dict[str, Any] = transform(template, dict(values or {}), _OfflinePolicyLoader())
    except InvalidDocumentException as exc:
        raise SystemExit("\n".join(f"SAM error: {cause.message}" for cause in exc.causes)) from exc
    return result


_NO_VALUE = object()


def _as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [] if value is None else [value]


def _decide(template: dict[str, Any], values: dict[str, str]) -> tuple[Any, Any, Any]:
    """For these parameter values (others take their defaults): a named condition's truth, a walk that
    replaces every `Fn::If` by its chosen branch and drops `AWS::NoValue`, and the truth of a condition
    expression (Fn::Equals, Fn::Not, Fn::And, Fn::Or, Condition; also what Rules assert)."""
    parameters = {name: str(spec.get("Default", "")) for name, spec in template.get("Parameters", {}).items()}
    parameters.update(values)
    conditions: dict[str, bool] = {}

    def condition(name: str) -> bool:
        if name not in conditions:
            conditions[name] = truth(template["Conditions"][name])
        return conditions[name]

    def value(node: Any) -> Any:
        if isinstance(node, dict) and set(node) == {"Ref"} and node["Ref"] in parameters:
            return parameters[node["Ref"]]
        return node

    def truth(node: Any) -> bool:
        (function, args), *_ = node.items()
        if function == "Fn::Equals":
            return bool(value(args[0]) == value(args[1]))
        if function == "Fn::Not":
            return not truth(args[0])
        if function == "Fn::And":
            return all(truth(a) for a in args)
        if function == "Fn::Or":
            return any(truth(a) for a in args)
        if function == "Condition":
            return condition(args)
        raise ValueError(f"unsupported condition function {function}")

    def walk(node: Any) -> Any:
        if isinstance(node, dict):
            if set(node) == {"Fn::If"}:
                name, yes, no = node["Fn::If"]
                return walk(yes if condition(name) else no)
            if node == {"Ref": "AWS::NoValue"}:
                return _NO_VALUE
            kept = {key: walk(item) for key, item in node.items()}
            return {key: item for key, item in kept.items() if item is not _NO_VALUE}
        if isinstance(node, list):
            return [item for item in map(walk, node) if item is not _NO_VALUE]
        return node

    return condition, walk, truth


def language_extensions(template: dict[str, Any], values: dict[str, str]) -> dict[str, Any]:
    """What `AWS::LanguageExtensions` hands the SAM transform: every `Fn::If` of Resources and Outputs
    decided (also in SAM properties, DeletionPolicy and UpdateReplacePolicy). Resources keep their
    conditions; SAM's Globals, not a CloudFormation section, are left as they are (as SAM CLI's own
    implementation of the transform does), their `Fn::If`s decided by CloudFormation after the SAM one."""
    _, walk, _ = _decide(template, values)
    resolved = dict(template)
    for section in ("Resources", "Outputs"):
        if section in template:
            resolved[section] = walk(template[section])
    resolved["Transform"] = [t for t in _as_list(template["Transform"]) if t != LANGUAGE_EXTENSIONS]
    return resolved


def resolve(cfn: dict[str, Any], values: dict[str, str]) -> dict[str, Any]:
    """`cfn` as deployed with these parameter values (others take their defaults): conditions decided."""
    condition, walk, _ = _decide(cfn, values)
    resolved = dict(cfn)
    for section in ("Resources", "Outputs"):
        kept = {k: v for k, v in cfn.get(section, {}).items() if "Condition" not in v or condition(v["Condition"])}
        resolved[section] = {k: {f: x for f, x in walk(v).items() if f != "Condition"} for k, v in kept.items()}
    resolved.pop("Conditions", None)
    resolved.pop("Rules", None)
    resolved["Parameters"] = {
        name: {**spec, "Default": _typed(spec, values[name])} if name in values else spec
        for name, spec in cfn.get("Parameters", {}).items()
    }
    return resolved


def broken_rules(cfn: dict[str, Any], values: dict[str, str]) -> list[str]:
    """The template's Rules that these parameter values break, as CloudFormation would refuse them:
    `Rule name: AssertDescription` for each failed assertion of a rule whose RuleCondition holds."""
    _, _, truth = _decide(cfn, values)
    broken = []
    for name, rule in cfn.get("Rules", {}).items():
        if "RuleCondition" in rule and not truth(rule["RuleCondition"]):
            continue
        for assertion in rule.get("Assertions", []):
            if not truth(assertion["Assert"]):
                broken.append(f"Rule {name}: {assertion.get('AssertDescription', json.dumps(assertion['Assert']))}")
    return broken


def _typed(spec: dict[str, Any], value: str) -> Any:
    """A parameter value as its declaration's AllowedValues hold it (numbers for a Number)."""
    if spec.get("Type") == "Number" and value.lstrip("-").isdigit():
        return int(value)
    return value


_RULES: dict[str, Any] = {}
"""cfn-lint's rules, loaded once a process: loading every rule module is about half of a lint's time."""


def lint(cfn_path: Path, ignore: tuple[str, ...] = ()) -> list[str]:
    """cfn-lint findings (errors, warnings and informational) for a CloudFormation file: what cfn-lint's
    `api.lint_file` finds, with the rules (which the configuration only filters) loaded once."""
    from cfnlint.config import ConfigMixIn, ManualArgs
    from cfnlint.runner import Runner
    from cfnlint.runner.template.runner import run_template_by_file_paths

    args = ManualArgs(include_checks=["I"], ignore_checks=list(ignore), regions=["us-east-1"])
    config = ConfigMixIn(["--template", str(cfn_path)], **args)
    if "rules" not in _RULES:
        _RULES["rules"] = Runner(config).rules
    matches = run_template_by_file_paths(config, _RULES["rules"])
    return [f"{m.rule.id} {m.message} ({m.filename}:{m.linenumber})" for m in matches]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("template", nargs="?", type=Path, default=ROOT / "template.yaml")
    parser.add_argument("--out", type=Path, default=ROOT / "build/template.cfn.json")
    parser.add_argument("--param", action="append", default=[], metavar="KEY=VALUE", help="a parameter value")
    args = parser.parse_args(argv)
    os.environ.setdefault("AWS_DEFAULT_REGION", "us-east-1")  # the translator needs a region, never a call
    cfn = to_cloudformation(args.template)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(cfn, indent=1), encoding="utf-8")
    findings = lint(args.template) + lint(args.out)  # the SAM-level schema, then what it becomes
    if args.param:
        values = dict(p.split("=", 1) for p in args.param)
        deployed = resolve(to_cloudformation(args.template, values), values)
        deployed_path = args.out.with_suffix(".deployed.json")
        deployed_path.write_text(json.dumps(deployed, indent=1), encoding="utf-8")
        findings += lint(deployed_path, ignore=("W2001",))  # parameters other modes use are unused here
        findings += broken_rules(cfn, values)  # CloudFormation would refuse these values before deploying
        print(f"resolved for {values}: {len(deployed['Resources'])} resources -> {deployed_path}")
    resources = sorted({r["Type"] for r in cfn.get("Resources", {}).values()})
    print(f"transformed {args.template.name}: {len(cfn.get('Resources', {}))} resources -> {args.out}")
    print("  types: " + ", ".join(resources))
    for finding in findings:
        print("  " + finding)
    print(f"{len(findings)} findings")
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
