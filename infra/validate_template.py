"""Validate a SAM template offline: transform it with aws-sam-translator, then cfn-lint the CloudFormation.

Usage: python infra/validate_template.py [template.yaml] [--out build/template.cfn.json]

Why both steps: cfn-lint >= 1.54 (and `sam validate --lint`) no longer lints what SAM resources
become, so bugs in functions, event sources and their wiring pass unseen on the SAM template.
Linting the translator's output catches them. No AWS account, credentials or network needed.
Also lints the SAM template itself (its schema). Prints each finding and `N findings`; exits 0
only when there are none.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
LOCAL_URI_KEYS = ("CodeUri", "ContentUri", "DefinitionUri")


class _OfflinePolicyLoader:
    """Managed policy names resolve from the translator's bundled map; nothing is fetched from IAM."""

    def load(self) -> dict[str, str]:
        return {}


def to_cloudformation(template_path: Path) -> dict[str, Any]:
    """The CloudFormation that `sam deploy` would submit, with local code paths as S3 placeholders."""
    from samtranslator.public.exceptions import InvalidDocumentException
    from samtranslator.translator.transform import transform
    from samtranslator.yaml_helper import yaml_parse

    template = yaml_parse(template_path.read_text(encoding="utf-8"))
    for name, resource in template.get("Resources", {}).items():
        properties = resource.get("Properties") or {}
        for key in LOCAL_URI_KEYS:  # what `sam package` does: local paths -> uploaded S3 objects
            value = properties.get(key)
            if isinstance(value, str) and not value.startswith("s3://"):
                properties[key] = f"s3://placeholder-bucket/{name}.zip"
    try:
        result: dict[str, Any] = transform(template, {}, _OfflinePolicyLoader())
    except InvalidDocumentException as exc:
        raise SystemExit("\n".join(f"SAM error: {cause.message}" for cause in exc.causes)) from exc
    return result


def lint(cfn_path: Path) -> list[str]:
    """cfn-lint findings (errors, warnings and informational) for a CloudFormation file."""
    from cfnlint.api import lint_file
    from cfnlint.config import ManualArgs

    matches = lint_file(cfn_path, config=ManualArgs(include_checks=["I"], regions=["us-east-1"]))
    return [f"{m.rule.id} {m.message} ({m.filename}:{m.linenumber})" for m in matches]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("template", nargs="?", type=Path, default=ROOT / "template.yaml")
    parser.add_argument("--out", type=Path, default=ROOT / "build/template.cfn.json")
    args = parser.parse_args(argv)
    os.environ.setdefault("AWS_DEFAULT_REGION", "us-east-1")  # the translator needs a region, never a call
    cfn = to_cloudformation(args.template)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(cfn, indent=1), encoding="utf-8")
    findings = lint(args.template) + lint(args.out)  # the SAM-level schema, then what it becomes
    resources = sorted({r["Type"] for r in cfn.get("Resources", {}).values()})
    print(f"transformed {args.template.name}: {len(cfn.get('Resources', {}))} resources -> {args.out}")
    print("  types: " + ", ".join(resources))
    for finding in findings:
        print("  " + finding)
    print(f"{len(findings)} findings")
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
