"""`UsageError`, the failure of a command asked for something it cannot do, and the checks of the
command-line values every server command shares (`--port`, the project's default app)."""

from __future__ import annotations

from pathlib import Path

PROJECT_APP = "app/app.py"
"""The app of a project made by `lambda-mcp new` (its `app/` is the function's code)."""


class UsageError(Exception):
    """A command cannot do what it was asked; the message says what went wrong and, when there is one, the fix."""


def port_number(value: str | int | None, flag: str = "--port") -> int | None:
    """`value` as a TCP port (1-65535); `UsageError` naming `flag` for anything else."""
    if value is None:
        return None
    text = str(value).strip()
    if not text.isdigit() or not 0 < int(text) < 65536:
        raise UsageError(f"{flag} must be 1-65535, not {value}")
    return int(text)


def project_app(given: str | None, option: str, cwd: Path | None = None) -> str:
    """The app target: `given`, else the app of the project made by `lambda-mcp new` in the current
    directory (`app/app.py`); `UsageError` naming `option` (how the command takes it) when there is neither."""
    if given:
        return given
    if ((cwd or Path.cwd()) / PROJECT_APP).is_file():
        return PROJECT_APP
    raise UsageError(
        f"give the app as {option}: path/to/file.py[:app] or module[:app] (in the directory of a project made by"
        f" `lambda-mcp new`, it is {PROJECT_APP} when not given)"
    )
