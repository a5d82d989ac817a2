"""Load the user's `MCPApp` from a target: `path/to/file.py[:app]` or `package.module[:app]`."""

from __future__ import annotations

import importlib
import importlib.util
import sys
from pathlib import Path
from types import ModuleType

from .server.app import MCPApp
from .server.errors import DeclarationError


class AppLoadError(Exception):
    """The target names no app the kit can load, or the app declares something the kit cannot serve: the
    message is one line saying what to change (`lambda-mcp` prints it as that line)."""


def load_app(target: str) -> MCPApp:
    location, _, attribute = target.partition(":")
    try:
        module = _import_file(location) if location.endswith(".py") or "/" in location else _import_module(location)
    except DeclarationError as exc:  # `file:line: tool 'x': ...`: the place and the fix, nothing of the kit's
        raise AppLoadError(str(exc)) from exc
    if attribute:
        if not hasattr(module, attribute):
            raise AppLoadError(f"{location} has no attribute {attribute!r}: name the MCPApp as {location}:NAME")
        app = getattr(module, attribute)
    else:
        found = [v for v in vars(module).values() if isinstance(v, MCPApp)]
        named_app = getattr(module, "app", None)  # several (one mounts the others): the one named `app`
        app = found[0] if len(found) == 1 else named_app if isinstance(named_app, MCPApp) else None
        if app is None:
            raise AppLoadError(
                f"{location}: expected exactly one MCPApp (or one named app), found {len(found)};"
                f" name it as {location}:NAME"
            )
    if not isinstance(app, MCPApp):
        found_type = type(app).__name__
        raise AppLoadError(f"{target} is not an MCPApp (its type is {found_type}): name the MCPApp as {location}:NAME")
    return app


def _import_file(location: str) -> ModuleType:
    path = Path(location).resolve()
    if not path.is_file():
        raise AppLoadError(f"no such file: {location} (give path/to/file.py[:app] or module[:app])")
    name = f"_lambda_mcp_user_{path.stem}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise AppLoadError(f"cannot import {location}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    sys.path.insert(0, str(path.parent))
    spec.loader.exec_module(module)
    return module


def _import_module(location: str) -> ModuleType:
    """Import `package.module`; a module that is not found (not one the module itself imports) is an
    `AppLoadError`."""
    try:
        return importlib.import_module(location)
    except ModuleNotFoundError as exc:
        parts = location.split(".")
        if exc.name not in {".".join(parts[: i + 1]) for i in range(len(parts))}:
            raise  # the module was found; something it imports was not
        hint = "a file target ends in .py"
        if exc.name == location and "." in location:
            parent, _, last = location.rpartition(".")
            hint += f"; for the MCPApp {last} of module {parent}, write {parent}:{last}"
        raise AppLoadError(f"no module named {exc.name!r} in the current directory or on sys.path ({hint})") from None
