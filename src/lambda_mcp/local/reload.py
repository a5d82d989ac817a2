"""`lambda-mcp dev --reload`: uvicorn's reloader serves the app from a child process and starts a new one
whenever a Python file under the app's directory changes (with `--lambda` too: the child runs the
emulated front door and the Lambda handlers).

The dev command binds the socket once, in this process, so a busy port is still one line at start and the
port never changes between children. Each child is spawned (a fresh interpreter): it reads the settings
the dev command put in the environment (the facade's signing key, the development sign-in's secret, the
state key), so a sign-in survives a reload where its state does (`--aws local`). Watching uses
`watchfiles` when it is installed (`uvicorn[standard]`), else polls the files' modification times.
"""

from __future__ import annotations

import socket
from collections.abc import Callable
from pathlib import Path


def watched(target: str, cwd: Path | None = None) -> Path:
    """The directory to watch for `target`: a file target's own directory, else the current one."""
    where = cwd or Path.cwd()
    location = target.partition(":")[0]
    if location.endswith(".py") or "/" in location:  # as the loader tells a file from a module
        return (where / location).resolve().parent
    return where.resolve()


def run(serve: Callable[..., None], sock: socket.socket, directory: Path) -> None:
    """Run `serve(sockets=[sock])` in a child process, restarted on every change under `directory`, until
    SIGINT or SIGTERM."""
    import uvicorn
    from uvicorn.supervisors import ChangeReload

    # The app is `serve` (the supervisor passes it to each child); uvicorn reloads only for an import string.
    config = uvicorn.Config(
        "lambda_mcp.local.reload:run", reload=True, reload_dirs=[str(directory)], log_level="warning"
    )
    ChangeReload(config, target=serve, sockets=[sock]).run()
