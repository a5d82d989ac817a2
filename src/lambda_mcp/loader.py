"""Load the user's `MCPApp` from a target: `path/to/file.py[:app]` or `package.module[:app]`."""

from __future__ import annotations

import importlib
import importlib.util
import sys
from pathlib import Path

from .server.app import MCPApp


class AppLoadError(Exception):
    pass


def load_app(target: str) -> MCPApp:
    location, _, attribute = target.partition(":")
    if location.endswith(".py") or "/" in location:
        path = Path(location).resolve()
        if not path.is_file():
            raise AppLoadError(f"no such file: {location}")
        name = f"_lambda_mcp_user_{path.stem}"
        spec = importlib.util.spec_from_file_location(name, path)
        if spec is None or spec.loader is None:
            raise AppLoadError(f"cannot import {location}")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        sys.path.insert(0, str(path.parent))
        spec.loader.exec_module(module)
    else:
        module = importlib.import_module(location)
    if attribute:
        app = getattr(module, attribute, None)
    else:
        found = [v for v in vars(module).values() if isinstance(v, MCPApp)]
        app = found[0] if len(found) == 1 else None
        if app is None:
            raise AppLoadError(
                f"{location}: expected exactly one MCPApp, found {len(found)}; name it as {location}:NAME"
            )
    if not isinstance(app, MCPApp):
        raise AppLoadError(f"{target} is not an MCPApp")
    return app
