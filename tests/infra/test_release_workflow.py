"""The GitHub workflows, linted offline: the kit's (ci, release) and the one `lambda-mcp new` gives a project
are valid against SchemaStore's workflow schema (vendored in check-jsonschema), every job they need exists,
and every action is pinned. The release publishes by trusted publishing only from a version tag, after the
tests, and its tag/version/changelog check refuses a tag that is not the version."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.support.processes import ROOT

RELEASE = ROOT / ".github/workflows/release.yml"
PROJECT_CI = ROOT / "src/lambda_mcp/scaffold/project/.github/workflows/ci.yml"
WORKFLOWS = [*sorted((ROOT / ".github/workflows").glob("*.yml")), PROJECT_CI]


def _load(path: Path) -> dict[str, Any]:
    workflow: dict[Any, Any] = yaml.safe_load(path.read_text())
    workflow["on"] = workflow.pop(True, workflow.get("on"))  # YAML 1.1 reads the key `on` as true
    return workflow


def _lint(paths: list[Path]) -> subprocess.CompletedProcess[str]:
    args = [sys.executable, "-m", "check_jsonschema", "--builtin-schema", "vendor.github-workflows", *map(str, paths)]
    return subprocess.run(args, capture_output=True, text=True, timeout=120)


def test_every_workflow_passes_the_schema_and_pins_its_actions() -> None:
    assert {p.name for p in WORKFLOWS} >= {"ci.yml", "release.yml"} and PROJECT_CI in WORKFLOWS
    done = _lint(WORKFLOWS)
    assert done.returncode == 0, done.stdout + done.stderr
    for path in WORKFLOWS:
        jobs = _load(path)["jobs"]
        for name, job in jobs.items():
            for needed in [job["needs"]] if isinstance(job.get("needs"), str) else job.get("needs", []):
                assert needed in jobs, f"{path.name}: {name} needs an unknown job {needed}"
            for step in job["steps"]:
                if "uses" in step:
                    assert "@" in step["uses"] and not step["uses"].endswith(("@main", "@master")), step["uses"]


def test_the_lint_fails_a_broken_workflow(tmp_path: Path) -> None:
    broken = tmp_path / "broken.yml"
    broken.write_text(RELEASE.read_text().replace("runs-on: ubuntu-latest", "run-on: ubuntu-latest", 1))
    done = _lint([broken])
    assert done.returncode != 0 and "run-on" in done.stdout + done.stderr


def test_the_release_publishes_by_trusted_publishing_from_a_version_tag_after_the_tests() -> None:
    workflow = _load(RELEASE)
    assert workflow["on"] == {"push": {"tags": ["v*"]}}
    assert workflow["permissions"] == {"contents": "read"}
    jobs = workflow["jobs"]
    publish = jobs["publish"]
    assert set(publish["needs"]) == {"build", "test"}
    assert publish["permissions"] == {"id-token": "write"}  # OIDC, and nothing else
    assert publish["environment"]["name"] == "pypi"
    (step,) = [s for s in publish["steps"] if s.get("uses", "").startswith("pypa/gh-action-pypi-publish@")]
    assert not {"password", "user"} & set(step.get("with", {}))  # no stored token
    assert "secrets." not in RELEASE.read_text()
    build = "\n".join(s.get("run", "") for s in jobs["build"]["steps"])
    assert "python -m build" in build and "twine check --strict dist/*" in build
    assert "./scripts/test" in "\n".join(s.get("run", "") for s in jobs["test"]["steps"])
    release = jobs["github-release"]
    assert release["needs"] == "publish" and release["permissions"] == {"contents": "write"}
    assert "gh release create" in release["steps"][-1]["run"] and "dist/*.whl" in release["steps"][-1]["run"]


@pytest.mark.parametrize(
    ("tag", "changelog", "ok"),
    [
        (
            "v1.2.3",
            "# Changelog\n\n## [Unreleased]\n\n## [1.2.3] - 2026-11-25\n### Added\n- it\n\n## [1.2.2]\n- old\n",
            True,
        ),
        ("v1.2.4", "## [1.2.3]\n- it\n", False),  # the tag is not pyproject's version
        ("v1.2.3", "## [Unreleased]\n- it\n", False),  # the changelog has no section for it
    ],
)
def test_the_release_checks_the_tag_against_the_version_and_the_changelog(
    tmp_path: Path, tag: str, changelog: str, ok: bool
) -> None:
    (step,) = [s for s in _load(RELEASE)["jobs"]["build"]["steps"] if s.get("name", "").startswith("Check the tag")]
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "lambda-mcp"\nversion = "1.2.3"\n')
    (tmp_path / "CHANGELOG.md").write_text(changelog)
    env = {"PATH": str(Path(sys.executable).parent) + ":/usr/bin:/bin", "GITHUB_REF_NAME": tag}
    done = subprocess.run(["bash", "-e", "-c", step["run"]], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert (done.returncode == 0) is ok, done.stdout + done.stderr
    if ok:
        assert (tmp_path / "release-notes.md").read_text() == "### Added\n- it\n\n"
    else:
        assert "::error::" in done.stdout


def test_a_new_projects_ci_installs_tests_lints_and_builds() -> None:
    workflow = _load(PROJECT_CI)
    assert workflow["permissions"] == {"contents": "read"}
    runs = "\n".join(s.get("run", "") for job in workflow["jobs"].values() for s in job["steps"])
    for command in (
        "pip install -r requirements-dev.txt",
        "python -m pytest tests",
        "sam validate --lint",
        "sam build",
    ):
        assert command in runs, command
