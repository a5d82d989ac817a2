"""`lambda-mcp new NAME`: a project of one's own that deploys as it is.

The project is the files under `project/` (`*.tmpl` ones with `{{name}}`, `{{kit}}` and
`{{kit_requirement}}` filled in) and the kit's own template.yaml, rewritten for the project's layout: its
app in `app/`, its layers built by the Makefiles in `builds/`. So a new project always has the
parameters, guardrails and fixes of the kit it was made with. It names the kit by version, and carries
the kit's wheel when that version is not a release on the package index (`kit.py`): no path of this
machine is written into it. Nothing that exists is overwritten.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from importlib import resources
from importlib.abc import Traversable
from pathlib import Path

from .agentcore import add_agentcore
from .kit import Kit, KitError, choose_kit

NAME = re.compile(r"^[A-Za-z][A-Za-z0-9-]{0,63}$")
"""A project name: also its CloudFormation stack name and its MCP server name."""


class ScaffoldError(Exception):
    """The project cannot be created (a bad name, an existing directory); the message says why."""


@dataclass(frozen=True)
class Rewrite:
    """One change that turns the kit's template.yaml into a project's: `old` must occur exactly `count` times."""

    old: str
    new: str
    count: int = 1


TEMPLATE_REWRITES = (
    Rewrite("      CodeUri: examples/weather/\n", "      CodeUri: app/\n", count=5),
    Rewrite("    Default: server.py:app\n", "    Default: app.py:app\n"),
    Rewrite("src/lambda_mcp/scaffold/project/builds/", "builds/", count=7),
    Rewrite("      ContentUri: src/\n", "      ContentUri: builds/kit/\n"),
    Rewrite("      ContextPath: layers/kit\n", ""),
    Rewrite(
        "  # KitLayer: the lambda_mcp package, copied from src/ by layers/kit/Makefile (ContextPath), so that any\n"
        "  # change under src/ invalidates the cached layer; the Makefile is not in src/, and not in the cache key.\n",
        "  # KitLayer: the lambda_mcp package, installed by builds/kit/Makefile from the kit named there (by\n"
        "  # version, or the wheel beside it): a new kit changes builds/kit/, so `sam build --cached` rebuilds it.\n",
    ),
)


def create_project(name: str, parent: Path, kit_wheel: Path | None = None, *, agentcore: bool = False) -> Path:
    """Create `parent/name` and return it; `ScaffoldError` when the name is invalid, the directory exists
    or `kit_wheel` (the kit's wheel to build the project with, instead of the running kit) is not one.
    `agentcore`: also the AgentCore Runtime files (`agentcore.py`: an arm64 Dockerfile, deploy notes)."""
    if not NAME.match(name):
        raise ScaffoldError(
            f"{name!r} is not a usable project name: start with a letter, then letters, digits or hyphens"
            " (at most 64 characters; it is also the stack name)"
        )
    target = parent / name
    if target.exists():
        raise ScaffoldError(f"{target} already exists: choose another name or remove it first")
    try:
        kit = choose_kit(kit_wheel)
    except KitError as exc:
        raise ScaffoldError(str(exc)) from None
    files = resources.files(__package__) / "project"
    values = {"{{name}}": name, "{{kit}}": kit_reference(kit), "{{kit_requirement}}": kit.requirement}
    target.mkdir(parents=True)
    for source, relative in _walk(files):
        destination = target / relative
        destination.parent.mkdir(parents=True, exist_ok=True)
        if relative == "template.yaml":
            destination.write_text(project_template(source.read_text(encoding="utf-8")), encoding="utf-8")
        elif relative.endswith(".tmpl"):
            text = source.read_text(encoding="utf-8")
            for placeholder, value in values.items():
                text = text.replace(placeholder, value)
            (target / relative.removesuffix(".tmpl")).write_text(text, encoding="utf-8")
        else:
            destination.write_bytes(source.read_bytes())
            if relative.endswith(".sh"):
                destination.chmod(0o755)  # run.sh: the streaming function's handler, run by LWA's wrapper
    if (target / "gitignore").exists():
        (target / "gitignore").rename(target / ".gitignore")
    kit.write(target / "builds" / "kit")
    if agentcore:
        add_agentcore(target, name, kit)
    return target


def project_template(kit_template: str) -> str:
    """The kit's template.yaml for a project's layout (`ScaffoldError` if the kit's has drifted)."""
    text = kit_template
    for rewrite in TEMPLATE_REWRITES:
        found = text.count(rewrite.old)
        if found != rewrite.count:
            raise ScaffoldError(f"template.yaml has {found} of {rewrite.old.strip()!r}, expected {rewrite.count}")
        text = text.replace(rewrite.old, rewrite.new)
    return text


def next_steps(project: Path) -> str:
    """What `lambda-mcp new` prints once it made `project`: the commands to run next, in order, each as it runs
    in a virtual environment that holds only the kit (the first installs what the next ones need; CI runs
    them as printed: tests/infra/test_install.py)."""
    steps = [
        (f"cd {shlex.quote(str(project))}", ""),
        ("python -m pip install -r requirements-dev.txt", "the kit and pytest, for its tests"),
        ("python -m pytest tests", "its tests, in process"),
        ("lambda-mcp dev app/app.py", "serve it on http://127.0.0.1:8000/mcp (Ctrl-C stops it)"),
        ("sam build && sam deploy --guided", "with the AWS SAM CLI: AuthMode first, see README.md"),
    ]
    if (project / "Dockerfile").exists():
        steps.append(("docker buildx build --platform linux/arm64 .", "or the AgentCore Runtime image: AGENTCORE.md"))
    width = max(len(command) for command, _ in steps)
    lines = [f"  {command:<{width}}  # {note}" if note else f"  {command}" for command, note in steps]
    return "\n".join([f"created {project}; next:", *lines])


def kit_reference(kit: Kit) -> str:
    """What builds/kit/Makefile installs: the wheel beside it (a relative path), or the release by version."""
    return kit.wheel_name or kit.requirement


def _walk(root: Traversable, prefix: str = "") -> list[tuple[Traversable, str]]:
    found: list[tuple[Traversable, str]] = []
    for entry in sorted(root.iterdir(), key=lambda e: e.name):
        if entry.name == "__pycache__":
            continue
        relative = f"{prefix}{entry.name}"
        if entry.is_dir():
            found += _walk(entry, relative + "/")
        else:
            found.append((entry, relative))
    return found
