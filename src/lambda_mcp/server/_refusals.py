"""Refuse a declaration in one line that starts with where the user wrote it (`app.py:12: tool 'add': ...`).

The place comes from the handler's code object (the line of the parameter at fault, else of its `def`),
or, when there is no handler yet (`@app.tool(42)`), from the first frame of the stack outside the kit.
Only the refusal path reads source files.
"""

from __future__ import annotations

import inspect
import os
import sys
import types
from collections.abc import Callable
from typing import Any

from .errors import DeclarationError

_KIT = os.path.dirname(os.path.dirname(os.path.realpath(__file__))) + os.sep
"""The kit's package directory: frames in it are not the user's (pathlib stays off the cold path)."""


def refused(reason: str, fn: object = None, parameter: str | None = None) -> DeclarationError:
    """The error to raise: `reason` after the place of `fn` (its `parameter`, or `"return"` for the return
    annotation), or after the caller's place when `fn` has no code of its own."""
    return DeclarationError(reason, where(fn, parameter))


def duplicate(kind: str, key: str, first: Callable[..., Any], fn: Callable[..., Any], fix: str) -> DeclarationError:
    """A second `kind` declared under `key`: both places, and how to tell them apart."""
    first_at = _place(first) or "an earlier declaration"
    return refused(f"{kind} {key!r} is declared twice (first at {first_at}): {fix}", fn)


def where(fn: object = None, parameter: str | None = None) -> str | None:
    """`file:line` of `fn` (the file relative to the current directory when it is under it), or of the
    first frame outside the kit; None when neither is known."""
    place = _place(fn, parameter)
    if place is not None:
        return place
    frame: types.FrameType | None = sys._getframe(1)
    while frame is not None:
        path = frame.f_code.co_filename
        if not path.startswith(_KIT) and not path.startswith("<frozen "):
            return f"{_shown(path)}:{frame.f_lineno}"
        frame = frame.f_back
    return None


def _place(fn: object, parameter: str | None = None) -> str | None:
    """`file:line` of `fn`'s code (of its `parameter` when the source can be read), if it has code."""
    code = getattr(inspect.unwrap(fn), "__code__", None) if callable(fn) else None
    if not isinstance(code, types.CodeType):
        return None
    return f"{_shown(code.co_filename)}:{_line(fn, code, parameter)}"


def _shown(path: str) -> str:
    """`path` relative to the current directory when it is under it."""
    try:
        real, here = os.path.realpath(path), os.path.realpath(os.getcwd())
    except OSError:
        return path
    return os.path.relpath(real, here) if real.startswith(here + os.sep) else path


def _line(fn: Any, code: types.CodeType, parameter: str | None) -> int:
    """The line of `parameter` in `fn`'s signature, else of its `def` (its first decorator's when the
    source cannot be read: the code object's first line)."""
    import ast  # only on the refusal path
    import textwrap

    try:
        lines, start = inspect.getsourcelines(fn)
        node = ast.parse(textwrap.dedent("".join(lines))).body[0]
    except (OSError, TypeError, SyntaxError, IndexError):
        return code.co_firstlineno
    if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
        return code.co_firstlineno
    found: ast.AST = node
    if parameter == "return" and node.returns is not None:
        found = node.returns
    signature = node.args
    for arg in (*signature.posonlyargs, *signature.args, signature.vararg, *signature.kwonlyargs, signature.kwarg):
        if arg is not None and arg.arg == parameter:
            found = arg
    return start + getattr(found, "lineno", node.lineno) - 1
