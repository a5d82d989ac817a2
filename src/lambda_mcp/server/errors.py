"""`ToolError`: the exception a handler raises to fail with a message meant for the user; `DeclarationError`:
what the kit raises when a handler is declared in a way it cannot serve."""

from __future__ import annotations


class ToolError(Exception):
    """Raise it from a tool to fail the call with a message meant for the user: the client gets it as
    the text of an `isError` result. Any other exception is logged with its traceback, and the client
    gets only a generic message with a reference id (tracebacks and internal details stay in the logs)."""


class DeclarationError(TypeError, ValueError):
    """A decorator used wrongly, or a handler the kit cannot serve, refused when it is declared: one line,
    `file:line: what is wrong and what to write`, where `file:line` (`where`) is the user's declaration.
    `lambda-mcp` prints it as that one line (`--debug`: the traceback). A `TypeError` (and a `ValueError`,
    for a value a decorator cannot take) so that code catching either keeps working."""

    def __init__(self, reason: str, where: str | None = None) -> None:
        super().__init__(f"{where}: {reason}" if where else reason)
        self.reason = reason
        self.where = where
