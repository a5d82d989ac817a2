"""The kit the way a user meets it (issue 24): the wheel and sdist `python -m build` makes, installed into a
clean venv (not editable, no checkout on the path, run from elsewhere). Its `lambda-mcp new demo` writes no
path of the machine into the project; the project, moved to another directory (a teammate's clone), passes
its own tests from its requirements-dev.txt, lints and `sam build`s with the kit's version in its KitLayer
(and none of the CLI's dependencies in its layers), and the installed `lambda-mcp dev` serves it."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import urllib.request
import zipfile
from pathlib import Path

import pytest

from lambda_mcp.scaffold import ScaffoldError, create_project, kit
from tests.infra.builds import VERSION, WHEEL, Installed, clean_env, run_sam
from tests.support.polling import wait_until
from tests.support.processes import ROOT, free_port

CLIENT = {"name": "install-test", "version": "1"}


@pytest.fixture(scope="module")
def project(installed: Installed) -> Path:
    """`lambda-mcp new demo` from the installed kit, then moved to another directory (a teammate's clone)."""
    made = installed.root / "made"
    made.mkdir()
    installed.run([str(installed.venv / "bin/lambda-mcp"), "new", "demo"], cwd=made)
    clone = installed.root / "teammate" / "demo"
    clone.parent.mkdir()
    shutil.move(made / "demo", clone)
    return clone


def test_the_wheel_holds_the_package_data(installed: Installed) -> None:
    names = set(zipfile.ZipFile(installed.wheel).namelist())
    project = "lambda_mcp/scaffold/project/"
    for name in (
        "lambda_mcp/py.typed",
        f"{project}template.yaml",
        f"{project}.github/workflows/ci.yml",
        f"{project}requirements-dev.txt.tmpl",
        f"{project}builds/kit/Makefile.tmpl",
        f"{project}builds/deps/requirements.lock",
        f"{project}builds/durable/requirements.lock",  # TaskBackend=durable's layer
        f"{project}builds/durable/Makefile",
        f"{project}builds/function/Makefile",
        f"{project}app/run.sh",  # Transport=streaming's handler (template.yaml)
    ):
        assert name in names, name


def test_the_installed_kit_is_the_wheel_and_knows_its_version(installed: Installed) -> None:
    probe = "import json, lambda_mcp; print(json.dumps([lambda_mcp.__version__, lambda_mcp.__file__]))"
    python = str(installed.venv / "bin/python")
    version, module = json.loads(installed.run([python, "-c", probe], cwd=installed.root).stdout)
    assert version == VERSION
    assert Path(module).is_relative_to(installed.venv) and not Path(module).is_relative_to(ROOT)
    shown = installed.run([str(installed.venv / "bin/lambda-mcp"), "--version"], cwd=installed.root).stdout
    assert shown.strip() == f"lambda-mcp {VERSION}"


def test_new_writes_no_path_of_the_machine_and_names_the_kit_by_version(installed: Installed, project: Path) -> None:
    machine = [str(installed.root), str(ROOT), str(Path(sys.executable).parent)]
    for path in (p for p in project.rglob("*") if p.is_file()):
        contents = [path.read_bytes()]
        if path.suffix == ".whl":
            with zipfile.ZipFile(path) as wheel:
                contents = [wheel.read(name) for name in wheel.namelist()]
        for data in contents:
            assert not [m for m in machine if m.encode() in data], path
    assert (project / ".github/workflows/ci.yml").is_file()
    assert f"lambda-mcp=={VERSION}\n" in (project / "requirements-dev.txt").read_text()
    # Installed from a wheel file, not from an index: the project carries the kit's wheel, by relative name.
    assert f"KIT := {WHEEL}\n" in (project / "builds/kit/Makefile").read_text()
    with zipfile.ZipFile(project / "builds/kit" / WHEEL) as carried:
        assert f"Version: {VERSION}\n" in carried.read(f"lambda_mcp-{VERSION}.dist-info/METADATA").decode()
        assert carried.read("lambda_mcp/__init__.py") == zipfile.ZipFile(installed.wheel).read("lambda_mcp/__init__.py")


def test_the_moved_project_passes_its_tests_from_its_dev_requirements(installed: Installed, project: Path) -> None:
    venv = installed.root / "project-venv"
    installed.run([sys.executable, "-m", "venv", str(venv)], cwd=installed.root)
    requirements = str(project / "requirements-dev.txt")  # run from elsewhere: its --find-links is its own
    installed.run([str(venv / "bin/python"), "-m", "pip", "install", "--quiet", "-r", requirements], cwd=installed.root)
    probe = "import lambda_mcp; print(lambda_mcp.__version__)"
    assert installed.run([str(venv / "bin/python"), "-c", probe], cwd=installed.root).stdout.strip() == VERSION
    done = installed.run([str(venv / "bin/python"), "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"], project)
    assert " passed" in done.stdout and "failed" not in done.stdout


def test_the_moved_project_lints_and_builds_with_the_kits_version_in_its_layer(
    installed: Installed, project: Path, sam_env: dict[str, str]
) -> None:
    env = clean_env(sam_env)  # pip offline, from the layers' wheels (the kit comes from the project's own wheel)
    # the builds' `python3` is the teammate's venv's (outside the checkout), never a pyenv shim whose rehash
    # the builds SAM runs at once race on (tests/infra/builds.py, sam_environment)
    env["PATH"] = os.pathsep.join([str(installed.venv / "bin"), env["PATH"]])
    linted = run_sam(["validate", "--lint"], project, env)
    assert linted.returncode == 0, linted.stdout + linted.stderr
    built = run_sam(["build", "--parameter-overrides", "AuthMode=none"], project, env)
    assert built.returncode == 0, built.stdout + built.stderr
    layers = project / ".aws-sam/build"
    (metadata,) = (layers / "KitLayer/python").glob("lambda_mcp-*.dist-info/METADATA")
    assert f"\nVersion: {VERSION}\n" in metadata.read_text()
    assert (layers / "KitLayer/python/lambda_mcp/entrypoints/http.py").is_file()
    for layer in ("KitLayer", "DepsLayer", "DurableLayer"):  # what only the CLI needs stays out of the deployment
        present = {p.name.lower() for p in (layers / layer / "python").iterdir()}
        assert not present & {"uvicorn", "bin"}, (layer, present)
        # the outgoing calls and YAML documents of app.openapi / app.mount: the dependency layer's alone
        assert (present >= {"httpx", "yaml"}) == (layer == "DepsLayer"), (layer, present)


def test_the_installed_lambda_mcp_dev_serves_the_project(installed: Installed, project: Path) -> None:
    port = free_port()
    log = (installed.root / "dev.log").open("wb")
    args = [str(installed.venv / "bin/lambda-mcp"), "dev", "app/app.py", "--port", str(port)]
    process = subprocess.Popen(args, cwd=project, env=installed.env, stdout=log, stderr=subprocess.STDOUT)
    try:
        wait_until(lambda: _answers(port), timeout=30, what=f"lambda-mcp dev on {port}")
        initialize = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "t", "version": "1"},
            },
        }
        request = urllib.request.Request(
            f"http://127.0.0.1:{port}/mcp",
            data=json.dumps(initialize).encode(),
            headers={"Content-Type": "application/json", "Accept": "application/json, text/event-stream"},
        )
        with urllib.request.urlopen(request, timeout=10) as response:
            answer = json.loads(response.read())
        assert answer["result"]["serverInfo"]["name"] == "demo"
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=5)
        log.close()


def _answers(port: int) -> bool:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/mcp", timeout=1):
            return True
    except urllib.error.HTTPError:
        return True  # listening (a GET without a session is refused)
    except OSError:
        return False


class _Distribution:
    """What `choose_kit` reads of the installed kit: its version and how pip installed it."""

    def __init__(self, version: str, direct_url: str | None) -> None:
        self.version, self._direct_url = version, direct_url

    def read_text(self, name: str) -> str | None:
        return self._direct_url if name == "direct_url.json" else None


@pytest.mark.parametrize(
    ("version", "direct_url", "carries_wheel"),
    [
        ("0.1.0", None, False),  # a release from an index: named by version only
        ("0.2.0rc1", None, False),
        ("0.2.0.dev3", None, True),  # a dev build is on no index
        ("0.1.0+g1234", None, True),  # nor is a local version
        ("0.1.0", '{"url": "file:///w/lambda_mcp-0.1.0-py3-none-any.whl", "archive_info": {}}', True),
        ("0.1.0", '{"url": "file:///w/checkout", "dir_info": {"editable": true}}', True),
    ],
)
def test_new_carries_the_kits_wheel_unless_it_is_a_release_from_an_index(
    monkeypatch: pytest.MonkeyPatch, version: str, direct_url: str | None, carries_wheel: bool
) -> None:
    monkeypatch.setattr(kit.metadata, "distribution", lambda name: _Distribution(version, direct_url))
    chosen = kit.choose_kit()
    assert chosen.requirement == f"lambda-mcp=={version}"
    expected = f"lambda_mcp-{version}-py3-none-any.whl" if carries_wheel else None
    assert chosen.wheel_name == expected


def test_new_with_a_kit_wheel_carries_that_wheel(installed: Installed, tmp_path: Path) -> None:
    made = create_project("given", tmp_path, kit_wheel=installed.wheel)
    assert (made / "builds/kit" / WHEEL).read_bytes() == installed.wheel.read_bytes()
    assert f"KIT := {WHEEL}\n" in (made / "builds/kit/Makefile").read_text()
    not_a_kit = tmp_path / "requests-2.0.0-py3-none-any.whl"
    not_a_kit.write_bytes(b"")
    with pytest.raises(ScaffoldError, match="is not a lambda-mcp wheel"):
        create_project("other", tmp_path, kit_wheel=not_a_kit)
    assert not (tmp_path / "other").exists()
