"""Which kit a new project's KitLayer installs, by version: `lambda-mcp==X.Y.Z` from the package index
when the running kit is a release installed from an index, else the running kit's own wheel, written
into the project (`builds/kit/lambda_mcp-X.Y.Z-py3-none-any.whl`) so that it builds on any machine.

"Not from an index" is what pip records for an install from a path, a wheel file or a VCS URL (editable
or not: `direct_url.json`), and any version with a dev or local part (`0.2.0.dev1`, `0.1.0+g1234`).
The wheel is assembled from the running package and its installed metadata (no build backend, no
network) and is the same bytes for the same files, so `sam build --cached` keeps its layer.
"""

from __future__ import annotations

import base64
import hashlib
import re
import shutil
import zipfile
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1]
"""The running `lambda_mcp` package (in a checkout for an editable install)."""
WHEEL_NAME = re.compile(r"^lambda_mcp-(?P<version>[^-]+)-py3-none-any\.whl$")
TIMESTAMP = (1980, 1, 1, 0, 0, 0)
WHEEL_FILE = b"Wheel-Version: 1.0\nGenerator: lambda-mcp new\nRoot-Is-Purelib: true\nTag: py3-none-any\n"


class KitError(Exception):
    """The kit cannot be named or copied (a wheel that is not lambda-mcp's); the message says why."""


@dataclass(frozen=True)
class Kit:
    """The kit a project names: its version, and its wheel when the project carries one."""

    version: str
    wheel: Path | None = None
    """A wheel to copy into builds/kit/ (None: lambda-mcp==version from the package index)."""
    build: bool = False
    """Assemble the running kit's wheel (instead of copying `wheel`)."""

    @property
    def requirement(self) -> str:
        return f"lambda-mcp=={self.version}"

    @property
    def wheel_name(self) -> str | None:
        if self.build:
            return f"lambda_mcp-{self.version}-py3-none-any.whl"
        return self.wheel.name if self.wheel is not None else None

    def write(self, directory: Path) -> Path | None:
        """Put the kit's wheel (if the project carries one) into `directory`; return its path."""
        name = self.wheel_name
        if name is None:
            return None
        destination = directory / name
        if self.build:
            write_running_wheel(destination)
        else:
            assert self.wheel is not None
            shutil.copyfile(self.wheel, destination)
        return destination


def choose_kit(wheel: Path | None = None) -> Kit:
    """The kit for a new project: `wheel` when given (`lambda-mcp new --kit-wheel`), else the running one."""
    if wheel is not None:
        found = WHEEL_NAME.match(wheel.name)
        if not found or not wheel.is_file():
            raise KitError(f"{wheel} is not a lambda-mcp wheel file (lambda_mcp-X.Y.Z-py3-none-any.whl)")
        return Kit(version=found["version"], wheel=wheel)
    try:
        distribution = metadata.distribution("lambda-mcp")
    except metadata.PackageNotFoundError:
        raise KitError("lambda-mcp runs without being installed: `pip install` it, or give --kit-wheel") from None
    version = distribution.version
    from_index = distribution.read_text("direct_url.json") is None
    release = re.fullmatch(r"[0-9]+(\.[0-9]+)*((a|b|rc)[0-9]+)?(\.post[0-9]+)?", version) is not None
    return Kit(version=version) if from_index and release else Kit(version=version, build=True)


def write_running_wheel(destination: Path) -> None:
    """The running kit as a wheel: its modules and package data, with its installed METADATA and entry points."""
    distribution = metadata.distribution("lambda-mcp")
    version = distribution.version
    info = f"lambda_mcp-{version}.dist-info"
    sources = {f"lambda_mcp/{path.relative_to(PACKAGE).as_posix()}": path for path in _package_files()}
    files = {name: path.read_bytes() for name, path in sources.items()}
    files[f"{info}/METADATA"] = (distribution.read_text("METADATA") or "").encode()
    entry_points = distribution.read_text("entry_points.txt")
    if entry_points:
        files[f"{info}/entry_points.txt"] = entry_points.encode()
    files[f"{info}/WHEEL"] = WHEEL_FILE
    record = [f"{name},sha256={_digest(data)},{len(data)}" for name, data in files.items()]
    files[f"{info}/RECORD"] = ("\n".join([*record, f"{info}/RECORD,,"]) + "\n").encode()
    temporary = destination.with_suffix(".partial")
    with zipfile.ZipFile(temporary, "w", zipfile.ZIP_DEFLATED) as wheel:
        for name, data in files.items():
            entry = zipfile.ZipInfo(name, TIMESTAMP)
            executable = name in sources and sources[name].stat().st_mode & 0o111
            entry.external_attr = (0o755 if executable else 0o644) << 16  # run.sh keeps its exec bit
            entry.compress_type = zipfile.ZIP_DEFLATED
            wheel.writestr(entry, data)
    temporary.replace(destination)


def _package_files() -> list[Path]:
    """What the kit's wheel holds (pyproject.toml's package data): every module, py.typed and the scaffold."""
    found = []
    for path in sorted(PACKAGE.rglob("*")):
        relative = path.relative_to(PACKAGE)
        if "__pycache__" in relative.parts or not path.is_file():
            continue
        if path.suffix == ".py" or relative.as_posix() == "py.typed" or relative.parts[:2] == ("scaffold", "project"):
            found.append(path)
    return found


def _digest(data: bytes) -> str:
    return base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
