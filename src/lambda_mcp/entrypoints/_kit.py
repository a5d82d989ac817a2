"""The Lambda entrypoints' kit: built once per process from `LAMBDA_MCP_*` settings.

Each deployed function imports only its own entrypoint; `lambda-mcp dev --lambda` imports both
into one process, where they then share one kit (and so one in-memory state).
"""

from __future__ import annotations

import functools
import importlib
from typing import TYPE_CHECKING

from ..config import Settings
from ..kit import Kit, build_kit
from ..loader import load_app

if TYPE_CHECKING:
    from ..observe.powertools import Observer


@functools.cache
def lambda_kit() -> Kit:
    settings = Settings.from_env(default_auth="none")  # the HTTP entrypoint insists on a choice
    if not settings.app:
        raise RuntimeError("set LAMBDA_MCP_APP to the app to serve, e.g. app.py:app")
    return build_kit(load_app(settings.app), settings, streaming=False)


@functools.cache
def lambda_observer() -> Observer:
    """One JSON log line and EMF metrics per request or task run (Powertools), shared by the entrypoints."""
    from ..observe.powertools import Observer

    kit = lambda_kit()
    return Observer(kit.settings, kit.app.name)


def register_snapstart_hooks(entrypoint: str) -> bool:
    """SnapStart's runtime hooks for the entrypoint module `entrypoint` (_snapstart.py), where the Lambda runtime
    provides `snapshot_restore_py` (Python 3.12+); anywhere else, all this costs is one failed import."""
    try:
        library = importlib.import_module("snapshot_restore_py")
    except ImportError:
        return False
    if not all(hasattr(library, name) for name in ("register_before_snapshot", "register_after_restore")):
        return False  # something else by that name (a folder on the path): not the runtime's library
    from ._snapstart import register

    register(entrypoint, library)
    return True
