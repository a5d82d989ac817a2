"""`lambda-mcp new demo` (issue 12): a project that deploys as it is. Its tests pass, its template transforms
and lints clean offline, SAM CLI discovers its routes, and `sam build` builds it offline on this
machine (Python 3.11, no Python 3.13, no Docker), the app's own requirements.txt included."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

import lambda_mcp
from lambda_mcp.check import load_template
from lambda_mcp.loader import load_app
from lambda_mcp.scaffold import ScaffoldError, create_project, project_template
from tests.infra.builds import run_sam, sam_routes
from tests.support.processes import ROOT

VALIDATE = ROOT / "infra/validate_template.py"
WHEEL = f"lambda_mcp-{lambda_mcp.__version__}-py3-none-any.whl"


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    parent = tmp_path_factory.mktemp("projects")
    done = subprocess.run(
        [sys.executable, "-m", "lambda_mcp.cli", "new", "demo", "--directory", str(parent)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return parent / "demo"


def test_the_project_has_what_a_user_deploys(demo: Path) -> None:
    files = sorted(str(p.relative_to(demo)) for p in demo.rglob("*") if p.is_file())
    assert files == [
        ".github/workflows/ci.yml",
        ".gitignore",
        "README.md",
        "app/app.py",
        "app/requirements.txt",
        "app/run.sh",  # the handler of Transport=streaming (template.yaml)
        "builds/deps/Makefile",
        "builds/deps/requirements.in",
        "builds/deps/requirements.lock",
        "builds/durable/Makefile",  # TaskBackend=durable: the durable worker's layer
        "builds/durable/requirements.in",
        "builds/durable/requirements.lock",
        "builds/function/Makefile",
        "builds/kit/Makefile",
        f"builds/kit/{WHEEL}",  # the editable kit is no release on the index: the project carries its wheel
        "events/greet.json",
        "requirements-dev.txt",
        "samconfig.toml",
        "template.yaml",
        "tests/conftest.py",  # the tests run on asyncio, also where trio is installed
        "tests/test_app.py",
    ]
    readme = (demo / "README.md").read_text()
    for command in (
        "lambda-mcp dev app/app.py",
        "lambda-mcp invoke events/greet.json --app app/app.py",
        "sam build",
        "sam deploy --guided",
    ):
        assert command in readme
    assert ".lambda-mcp/" in (demo / ".gitignore").read_text().splitlines()  # `--aws local` keeps its data there
    assert 'MCPApp("demo"' in (demo / "app/app.py").read_text()
    assert (demo / "app/run.sh").stat().st_mode & 0o111 == 0o111  # LWA's wrapper execs it
    assert 'stack_name = "demo"' in (demo / "samconfig.toml").read_text()
    assert f"KIT := {WHEEL}\n" in (demo / "builds/kit/Makefile").read_text()  # a path relative to the Makefile
    assert f"lambda-mcp=={lambda_mcp.__version__}\n" in (demo / "requirements-dev.txt").read_text()
    for path in (p for p in demo.rglob("*") if p.is_file() and p.suffix != ".whl"):
        assert str(ROOT) not in path.read_text(), path  # no path of this machine: the project builds anywhere


def test_the_project_asks_for_authmode_first_and_lists_every_mode(demo: Path) -> None:
    """`sam deploy --guided` asks in the template's order: AuthMode (no default) first, then the front door and
    the transport; the project's README and samconfig.toml name every mode the template allows."""
    for template in (ROOT / "template.yaml", demo / "template.yaml"):
        parameters = load_template(template)["Parameters"]
        assert list(parameters)[:3] == ["AuthMode", "ApiType", "Transport"], template
        assert "Default" not in parameters["AuthMode"]
    modes = load_template(demo / "template.yaml")["Parameters"]["AuthMode"]["AllowedValues"]
    assert len(modes) == 6
    readme = (demo / "README.md").read_text()
    for samconfig in (ROOT / "samconfig.toml", demo / "samconfig.toml"):
        comment = samconfig.read_text()
        assert "AuthMode=" not in tomllib.loads(comment)["default"]["deploy"]["parameters"]["parameter_overrides"]
        for mode in modes:
            assert re.search(rf"^#\s+{re.escape(mode)}\s+\S", comment, re.MULTILINE), (samconfig, mode)
    for mode in modes:
        assert re.search(rf"^\| `{re.escape(mode)}` \|", readme, re.MULTILINE), mode


def test_the_project_points_only_at_files_it_has_or_at_the_kit_by_name(demo: Path) -> None:
    template = (demo / "template.yaml").read_text()
    assert "AppCodeUri" not in template
    for text in (template, (demo / "README.md").read_text()):
        words = " ".join(text.replace("#", " ").split())
        for path in ("docs/deploy.md", "docs/decisions.md", "docs/guide.md", "infra/smoke.py"):
            for found in re.finditer(re.escape(path), words):
                before = words[max(0, found.start() - 60) : found.start()]
                assert "lambda-mcp" in before or "kit" in before, words[found.start() - 60 : found.end()]
    assert not (demo / "docs").exists() and not (demo / "infra").exists()


def test_each_generated_event_calls_its_tool_through_the_lambda_handler(demo: Path) -> None:
    """`lambda-mcp invoke events/<tool>.json --app app/app.py`, as the README says, for every example tool."""
    events = sorted((demo / "events").glob("*.json"))
    app = load_app(str(demo / "app/app.py"))
    assert [event.stem for event in events] == sorted(app.tools) == ["greet"]
    for event in events:
        sent = json.loads(event.read_text())
        body = json.loads(sent["body"])
        assert sent["headers"]["mcp-method"] == body["method"] == "tools/call"
        assert sent["headers"]["mcp-name"] == body["params"]["name"] == event.stem
        done = subprocess.run(
            [sys.executable, "-m", "lambda_mcp.cli", "invoke", f"events/{event.name}", "--app", "app/app.py"],
            cwd=demo,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr
        response = json.loads(done.stdout)
        assert response["statusCode"] == 200, response
        result = json.loads(response["body"])["result"]
        assert result["content"] == [{"type": "text", "text": "Hello, Ada!"}] and not result.get("isError")


def test_new_refuses_an_existing_directory_and_a_bad_name(tmp_path: Path) -> None:
    (tmp_path / "taken").mkdir()
    (tmp_path / "taken" / "keep.txt").write_text("mine")
    done = subprocess.run(
        [sys.executable, "-m", "lambda_mcp.cli", "new", "taken", "--directory", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1 and "already exists" in done.stderr
    assert [p.name for p in (tmp_path / "taken").iterdir()] == ["keep.txt"]
    for bad in ("1st", "my_app", "a b", "-x", "x" * 65):
        with pytest.raises(ScaffoldError, match="not a usable project name"):
            create_project(bad, tmp_path)


def test_a_drifted_kit_template_is_a_clear_error() -> None:
    with pytest.raises(ScaffoldError, match="expected 5"):
        project_template((ROOT / "template.yaml").read_text().replace("CodeUri: examples/weather/", "CodeUri: x/", 1))


def test_the_generated_tests_pass(demo: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"],
        cwd=demo,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "4 passed" in done.stdout


@pytest.mark.parametrize(
    "parameters",
    [
        ["AuthMode=none"],
        ["AuthMode=iam", "ApiType=REST"],
        ["AuthMode=jwt", "AuthIssuer=https://issuer.example.com", "AuthAudience=https://mcp.example.com/mcp"],
        ["AuthMode=cognito", "ApiType=URL", "AuthAudience=https://x.lambda-url.us-east-1.on.aws/mcp"],
        ["AuthMode=none", "TaskBackend=durable"],
        ["AuthMode=iam", "ApiType=URL", "Transport=streaming", "TaskBackend=durable"],
    ],
)
def test_the_generated_template_transforms_and_lints_clean(demo: Path, parameters: list[str]) -> None:
    args = [sys.executable, str(VALIDATE), str(demo / "template.yaml")]
    for parameter in parameters:
        args += ["--param", parameter]
    done = subprocess.run(args, capture_output=True, text=True, timeout=180, cwd=ROOT)
    assert done.returncode == 0 and done.stdout.strip().endswith("0 findings"), done.stdout + done.stderr


def test_sam_cli_discovers_mcp_on_the_generated_function(demo: Path, sam_env: dict[str, str]) -> None:
    (found,) = sam_routes([{"template": str(demo / "template.yaml"), "parameters": {"AuthMode": "none"}}], sam_env)
    assert isinstance(found, list), found
    mcp = [route for route in found if route["path"] == "/mcp"]
    assert mcp and {route["function"] for route in mcp} == {"McpHttpFunction"}
    assert {"GET", "POST", "DELETE", "OPTIONS"} <= {m for route in mcp for m in route["methods"]}


@pytest.mark.parametrize("backend", ["sqs", "durable"])
def test_sam_build_builds_the_project_with_its_own_requirements_without_python_313(
    demo: Path, sam_env: dict[str, str], tmp_path: Path, backend: str
) -> None:
    (demo / "app/requirements.txt").write_text("idna\n")  # a dependency of the app's own
    try:
        out = tmp_path / "build"
        args = ["build", "--template-file", str(demo / "template.yaml"), "--build-dir", str(out)]
        overrides = ["--parameter-overrides", "AuthMode=none", f"TaskBackend={backend}"]
        done = run_sam([*args, *overrides], tmp_path, sam_env)
        assert done.returncode == 0, done.stdout + done.stderr
    finally:
        (demo / "app/requirements.txt").write_text("")
    for name in ("McpHttpFunction", "DurableTaskWorkerFunction"):  # the durable worker runs the app's tools too
        function = out / name
        assert (function / "app.py").is_file() and (function / "idna").is_dir()
        assert not (function / "requirements.txt").exists()
    assert (out / "KitLayer/python/lambda_mcp/entrypoints/http.py").is_file()
    assert list((out / "KitLayer/python").glob("lambda_mcp-*.dist-info/METADATA"))
    assert (out / "DepsLayer/python/pydantic").is_dir()
    assert (out / "DurableLayer/python/aws_durable_execution_sdk_python").is_dir()
    built = (out / "template.yaml").read_text()  # the project's own builds/durable/, not the kit's checkout
    assert "ContentUri: DurableLayer" in built and "Handler: lambda_mcp.entrypoints.durable_worker.handler" in built
