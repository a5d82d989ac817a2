"""`lambda-mcp check`: the parameter values `sam deploy` would send, checked against the template before
anything is built, packaged or uploaded.

The values are what `sam deploy` reads: `parameter_overrides` of samconfig.toml's config environment
(`[default.deploy.parameters]`, else `[default.global.parameters]`), or `--parameter-overrides`, which
replace them as they do for `sam deploy`; every other parameter takes the template's `Default`. Refused,
one line each, is what CloudFormation refuses only after the upload: a parameter with neither a value nor
a default (`AuthMode`), a value outside `AllowedValues`, `AllowedPattern`, a length or a number range, a
name the template has no parameter for (`sam deploy` would drop it without a word), and each assertion of
the template's `Rules` the values break (its `AssertDescription`); `AuthTrustedIssuers` names each entry
that is no https:// URL. Warned, without refusing: a setting of the authorization facade (operator clients,
trusted issuers, DPoP, the connections' client secrets) with an `AuthMode` that runs no facade, and trusted
issuers without operator clients (whose jwt-bearer grant is the only use of an ID-JAG). It checks a new
stack: on an existing one, `sam deploy` keeps the previous value of a parameter it is not given, so keep
every value in samconfig.toml (`sam deploy --guided` writes them there). `--agentcore APP` checks instead
the app's tools against AgentCore Gateway's documented constraints (`agentcore/constraints.py`).
"""

from __future__ import annotations

import argparse
import re
import shlex
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

EXIT_REFUSED = 1
EXIT_UNREADABLE = 2
COMMANDS = ("deploy", "global")
"""The samconfig sections `sam deploy` reads its settings from, the first first."""
_HTTPS_URL = re.compile(r"https://[^\s,/]+[^\s,]*")


class CheckError(Exception):
    """The check cannot run (a file is missing or unreadable); the message says which and why."""


@dataclass(frozen=True)
class Deployment:
    """What `sam deploy` would use: the template and the parameter values it is given, and where they came from."""

    template: Path
    values: dict[str, str]
    source: str
    """Where the values were set, for messages: `samconfig.toml [default.deploy.parameters]`, or
    `--parameter-overrides`."""


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="lambda-mcp check",
        description="Check the parameters `sam deploy` would send (samconfig.toml or --parameter-overrides) against"
        " template.yaml before anything is uploaded: a missing AuthMode, a value the template does not allow, a"
        " broken template rule. Exit status 0: nothing to refuse; 1: refused (one line each); 2: unreadable.",
    )
    parser.add_argument("--template-file", "-t", type=Path, help="default: samconfig.toml's, else template.yaml")
    parser.add_argument("--config-file", type=Path, help="default: samconfig.toml, when it exists")
    parser.add_argument("--config-env", default="default", help="the samconfig environment (default: default)")
    parser.add_argument(
        "--parameter-overrides",
        nargs="+",
        metavar="KEY=VALUE",
        help="the values to check instead of samconfig.toml's, as given to `sam deploy --parameter-overrides`",
    )
    parser.add_argument("--agentcore", action="store_true", help="instead: check APP's tools against AgentCore Gateway")
    parser.add_argument("--agentcore-target", metavar="NAME", help="with --agentcore: the gateway target's name")
    parser.add_argument("app", nargs="?", metavar="APP", help="with --agentcore: path/to/file.py[:app] or module[:app]")
    args = parser.parse_args(argv)
    if args.app and not args.agentcore:
        parser.error("APP is checked with --agentcore only")
    if args.agentcore:
        from .agentcore.constraints import check_main

        return check_main(args.app, args.agentcore_target)
    try:
        deployment = resolve(args.template_file, args.config_file, args.config_env, args.parameter_overrides)
        template = load_template(deployment.template)
    except CheckError as exc:
        print(f"lambda-mcp check: {exc}", file=sys.stderr)
        return EXIT_UNREADABLE
    found = problems(template, deployment)
    for problem in found:
        print(f"lambda-mcp check: {problem}", file=sys.stderr)
    from .check_warnings import warnings

    for warning in warnings(template, given(template, deployment.values)):
        print(f"lambda-mcp check: warning: {warning}", file=sys.stderr)
    if found:
        return EXIT_REFUSED
    chosen = ", ".join(f"{name}={value}" for name, value in list(given(template, deployment.values).items())[:3])
    where = f"{deployment.template.name}, {deployment.source}"
    print(f"lambda-mcp check: {chosen}: nothing CloudFormation would refuse ({where})")
    return 0


def resolve(
    template_file: Path | None, config_file: Path | None, config_env: str, overrides: list[str] | None
) -> Deployment:
    """The template and parameter values `sam deploy` would use, read as it reads them."""
    config: dict[str, Any] = {}
    config_path = config_file or Path("samconfig.toml")
    if config_path.is_file():
        config = _read_config(config_path)
    elif config_file is not None:
        raise CheckError(f"{config_file}: no such file")
    sections = {command: config.get(config_env, {}).get(command, {}).get("parameters", {}) for command in COMMANDS}

    def setting(*keys: str) -> tuple[Any, str]:
        """A setting of `sam deploy` (its own section first, then the global one), and the section's name."""
        for command, section in sections.items():
            for key in (k for k in keys if k in section):
                return section[key], f"{config_path} [{config_env}.{command}.parameters]"
        return None, f"{config_path} [{config_env}.deploy.parameters]"

    configured, source = setting("parameter_overrides")
    if overrides is not None:
        values, source = parse_overrides(overrides), "--parameter-overrides"
    else:
        values = parse_overrides(configured) if configured is not None else {}
    configured_template, _ = setting("template_file", "template")
    if template_file is None and configured_template:
        template_file = config_path.parent / str(configured_template)
    if template_file is None:
        folder = config_path.parent
        template_file = next((p for p in (folder / "template.yaml", folder / "template.yml") if p.is_file()), None)
        if template_file is None:
            raise CheckError(f"no template.yaml in {folder.resolve()}: run it in the project, or pass --template-file")
    return Deployment(template_file, values, source)


def parse_overrides(value: Any) -> dict[str, str]:
    """`parameter_overrides` as `sam deploy` reads them: `Key=Value` pairs separated by spaces (a value may be
    quoted), or `ParameterKey=Key,ParameterValue=Value`; also a TOML list of them, or a table."""
    if isinstance(value, dict):
        return {
            str(k): "" if v is None else ",".join(map(str, v)) if isinstance(v, list) else str(v)
            for k, v in value.items()
        }
    if isinstance(value, list):
        merged: dict[str, str] = {}
        for item in value:
            merged.update(parse_overrides(item))
        return merged
    try:
        words = shlex.split(str(value))
    except ValueError as exc:
        raise CheckError(f"parameter_overrides {value!r} cannot be read: {exc}") from None
    parsed: dict[str, str] = {}
    for word in words:
        pair = re.fullmatch(r"ParameterKey=([^,=]+),ParameterValue=(.*)", word, re.DOTALL) or re.fullmatch(
            r"([^=]+)=(.*)", word, re.DOTALL
        )
        if pair is None:
            raise CheckError(f"parameter_overrides: {word!r} is not Key=Value")
        parsed[pair[1]] = pair[2]
    return parsed


def load_template(path: Path) -> dict[str, Any]:
    """A CloudFormation template (YAML with the short-form tags, or JSON), every scalar a string."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise CheckError(f"{path}: {exc.strerror or exc}") from None
    try:
        template = yaml.load(text, Loader=_TemplateLoader)  # BaseLoader: strings, lists, mappings; no objects
    except yaml.YAMLError as exc:
        raise CheckError(f"{path} is not a template: {' '.join(str(exc).split())}") from None
    if not isinstance(template, dict) or not isinstance(template.get("Parameters", {}), dict):
        raise CheckError(f"{path} is not a CloudFormation template (no Parameters mapping)")
    return template


class _TemplateLoader(yaml.BaseLoader):
    """YAML without implicit types (CloudFormation compares parameter values as strings) and with its
    short-form tags: `!Ref X` is `{"Ref": "X"}`, `!Equals [a, b]` is `{"Fn::Equals": ["a", "b"]}`."""


def _short_form(loader: yaml.BaseLoader, suffix: str, node: yaml.Node) -> dict[str, Any]:
    name = suffix if suffix in ("Ref", "Condition") else f"Fn::{suffix}"
    value: Any
    if isinstance(node, yaml.ScalarNode):
        value = loader.construct_scalar(node)
        if suffix == "GetAtt":
            value = value.split(".", 1)
    elif isinstance(node, yaml.SequenceNode):
        value = loader.construct_sequence(node, deep=True)
    else:
        value = loader.construct_mapping(node, deep=True)  # type: ignore[arg-type]
    return {name: value}


_TemplateLoader.add_multi_constructor("!", _short_form)


def given(template: dict[str, Any], values: dict[str, str]) -> dict[str, str]:
    """Every parameter's value as CloudFormation would take it (the value given, else the default), in the
    template's order; a parameter with neither is left out."""
    taken = {}
    for name, spec in _parameters(template).items():
        if name in values:
            taken[name] = values[name]
        elif "Default" in spec:
            taken[name] = _text(spec["Default"])
    return taken


def problems(template: dict[str, Any], deployment: Deployment) -> list[str]:
    """What CloudFormation would refuse of these values, one line each, in the template's order."""
    parameters = _parameters(template)
    found = [
        f"{deployment.source} sets {name}, which {deployment.template.name} has no parameter of"
        " (a typo? sam deploy would drop it)"
        for name in deployment.values
        if name not in parameters
    ]
    values = given(template, deployment.values)
    for name, spec in parameters.items():
        if name not in values:
            found.append(_no_value(name, spec, deployment))
        elif (refused := _refused(name, spec, values[name])) is not None:
            found.append(_not_https(name, values[name]) if name == "AuthTrustedIssuers" else refused)
    if found:  # rules read every parameter: a missing or malformed one would only add noise
        return found
    return _broken_rules(template, values)


def _not_https(name: str, value: str) -> str:
    """The entries of a comma-separated list of issuer URLs that are no https:// URL."""
    bad = [entry.strip() or "an empty entry" for entry in value.split(",") if not _HTTPS_URL.fullmatch(entry.strip())]
    what = "is not an https:// issuer URL" if len(bad) == 1 else "are not https:// issuer URLs"
    return f"{name}: {', '.join(bad)} {what} (comma-separated, https://idp.example.com)"


def _no_value(name: str, spec: dict[str, Any], deployment: Deployment) -> str:
    choices = spec.get("AllowedValues")
    choose = f": choose one of {', '.join(map(_text, choices))}" if isinstance(choices, list) else ""
    if deployment.source == "--parameter-overrides":
        where = f"pass {name}=... in --parameter-overrides"
    else:
        where = f"put {name}=... first in parameter_overrides of samconfig.toml, or pass --parameter-overrides"
    return f"{name} has no value and {deployment.template.name} gives it no default{choose} ({where})"


def _refused(name: str, spec: dict[str, Any], value: str) -> str | None:
    """Why CloudFormation would refuse `value` for this parameter (its declared constraints), or None."""
    kind = _text(spec.get("Type", "String"))
    choices = spec.get("AllowedValues")
    why = _text(spec.get("ConstraintDescription", "")).strip()
    if kind == "CommaDelimitedList":
        items = [item.strip() for item in value.split(",")]
        if isinstance(choices, list) and any(item not in map(_text, choices) for item in items):
            return f"{name}={value} holds a value that is not one of {', '.join(map(_text, choices))}"
        return None
    if isinstance(choices, list) and value not in map(_text, choices):
        allowed = ", ".join(map(_text, choices))
        return f"{name}={value} is not one of {allowed}" if value else f"{name} is empty: choose one of {allowed}"
    if kind == "Number":
        try:
            return _out_of_bounds(name, value, float(value), spec, ("MinValue", "MaxValue"))
        except ValueError:
            return f"{name}={value} is not a number"
    pattern = spec.get("AllowedPattern")
    if pattern is not None:
        try:
            matches = re.fullmatch(_text(pattern), value) is not None
        except re.error:
            matches = True  # a pattern Python cannot read: CloudFormation will judge it
        if not matches:
            return f"{name}={value}: {name} {why}" if why else f"{name}={value} does not match {_text(pattern)}"
    return _out_of_bounds(name, value, len(value), spec, ("MinLength", "MaxLength"))


def _out_of_bounds(name: str, value: str, measure: float, spec: dict[str, Any], bounds: tuple[str, str]) -> str | None:
    """`measure` (a Number's value, a String's length) against the parameter's lower and upper bound."""
    low, high = bounds
    if low in spec and measure < float(_text(spec[low])):
        return f"{name}={value} is below its {low}, {_text(spec[low])}"
    if high in spec and measure > float(_text(spec[high])):
        return f"{name}={value} is above its {high}, {_text(spec[high])}"
    return None


class _Undecidable(Exception):
    """A rule uses a function that needs the AWS account (`Fn::ValueOf`, ...): CloudFormation decides it."""


def _broken_rules(template: dict[str, Any], values: dict[str, str]) -> list[str]:
    """Each assertion of the template's Rules that these values break: its AssertDescription."""
    parameters = _parameters(template)

    def value(node: Any) -> Any:
        if isinstance(node, dict) and set(node) == {"Ref"}:
            name = node["Ref"]
            if name not in values:
                raise _Undecidable(name)
            if _text(parameters[name].get("Type", "")) == "CommaDelimitedList":
                return [item.strip() for item in values[name].split(",")]
            return values[name]
        if isinstance(node, dict):
            raise _Undecidable(next(iter(node), ""))
        return node

    def truth(node: Any) -> bool:
        if not isinstance(node, dict) or len(node) != 1:
            raise _Undecidable(str(node))
        ((function, args),) = node.items()
        if function == "Fn::Equals":
            return bool(value(args[0]) == value(args[1]))
        if function == "Fn::Not":
            return not truth(args[0])
        if function == "Fn::And":
            return all(truth(arg) for arg in args)
        if function == "Fn::Or":
            return any(truth(arg) for arg in args)
        if function == "Fn::Contains":
            return value(args[1]) in value(args[0])
        if function == "Fn::EachMemberEquals":
            return all(item == value(args[1]) for item in value(args[0]))
        if function == "Fn::EachMemberIn":
            return all(item in value(args[1]) for item in value(args[0]))
        raise _Undecidable(function)

    broken = []
    rules = template.get("Rules") or {}
    for name, rule in rules.items() if isinstance(rules, dict) else ():
        try:
            if "RuleCondition" in rule and not truth(rule["RuleCondition"]):
                continue
            for assertion in rule.get("Assertions", []):
                if not truth(assertion["Assert"]):
                    broken.append(" ".join(_text(assertion.get("AssertDescription", f"rule {name}")).split()))
        except (_Undecidable, KeyError, IndexError, TypeError):
            continue  # not decidable here: CloudFormation checks it
    return broken


def _parameters(template: dict[str, Any]) -> dict[str, dict[str, Any]]:
    parameters = template.get("Parameters") or {}
    return {str(name): spec if isinstance(spec, dict) else {} for name, spec in parameters.items()}


def _text(value: Any) -> str:
    return value if isinstance(value, str) else str(value)


def _read_config(path: Path) -> dict[str, Any]:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise CheckError(f"{path}: {exc.strerror or exc}") from None
    try:
        config = tomllib.loads(text) if path.suffix == ".toml" else yaml.safe_load(text)
    except (tomllib.TOMLDecodeError, yaml.YAMLError) as exc:
        raise CheckError(f"{path} cannot be read: {' '.join(str(exc).split())}") from None
    if not isinstance(config, dict):
        raise CheckError(f"{path} is not a SAM CLI configuration file")
    return config
