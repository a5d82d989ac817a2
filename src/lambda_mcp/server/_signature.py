"""Read a handler's signature (its pydantic arguments model, its `Context` parameter) and call it; refuse,
in one line, a decorator used wrongly or a signature the kit cannot serve."""

from __future__ import annotations

import functools
import inspect
import re
import types
import typing
from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated, Any, Union

import anyio.to_thread

from ._refusals import refused
from .context import Context

if TYPE_CHECKING:
    from pydantic import BaseModel


def context_parameter(fn: Callable[..., Any], hints: dict[str, Any]) -> str | None:
    """The name of the parameter annotated `Context` (or `Context | None`, `Optional[Context]`), if any."""
    for name in inspect.signature(fn).parameters:
        if _is_context(hints.get(name)):
            return name
    return None


def _is_context(hint: Any) -> bool:
    if inspect.isclass(hint):
        return issubclass(hint, Context)
    origin, members = typing.get_origin(hint), typing.get_args(hint)
    if origin is Annotated:
        return _is_context(members[0])
    if origin in (Union, types.UnionType):
        others = [member for member in members if member is not type(None)]
        return len(others) == 1 and len(members) == 2 and _is_context(others[0])
    return False


def arguments_model(fn: Callable[..., Any], skip: str | None) -> type[BaseModel]:
    """A model whose fields are the handler's parameters (less the context), for validation and schema."""
    from pydantic import ConfigDict, create_model

    hints = type_hints(fn)
    fields: dict[str, Any] = {}
    for name, param in inspect.signature(fn).parameters.items():
        if name == skip or param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            continue
        annotation = hints.get(name, Any)
        default = ... if param.default is inspect.Parameter.empty else param.default
        fields[name] = (annotation, default)
    config = ConfigDict(arbitrary_types_allowed=True)
    model: type[BaseModel] = create_model(f"{fn.__name__}Arguments", __config__=config, **fields)
    return model


def decorated(fn: object, usage: str) -> None:
    """Refuse decorating what is not a function: `usage` is the decorator as written (`@app.tool()`)."""
    if not callable(fn):
        raise refused(f"{usage} decorates a function, not {type(fn).__name__} {fn!r}: put it on a def")


def refuse_variadic(fn: Callable[..., Any], what: str) -> None:
    """Refuse `*args` and `**kwargs`: a call's arguments are named, and these would never get one."""
    for param in inspect.signature(fn).parameters.values():
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            stars = "*" if param.kind is param.VAR_POSITIONAL else "**"
            raise refused(
                f"{what}: parameter {stars}{param.name} is not supported: arguments arrive by name,"
                " so declare each one as a parameter of its own",
                fn,
                param.name,
            )


def type_name(hint: Any) -> str:
    """A type as its source spells it, without module prefixes (`list[Widget]`, not `list[app.Widget]`)."""
    text = hint.__qualname__ if isinstance(hint, type) and not typing.get_args(hint) else repr(hint)
    return re.sub(r"\b(?:[A-Za-z_]\w*\.)+(?=[A-Za-z_]\w*)", "", text.replace("<class '", "").replace("'>", ""))


def type_hints(fn: Callable[..., Any]) -> dict[str, Any]:
    try:
        return typing.get_type_hints(fn, include_extras=True)
    except Exception:  # unresolved forward references: fall back to raw annotations
        return dict(getattr(fn, "__annotations__", {}))


async def call(fn: Callable[..., Any], kwargs: dict[str, Any], *, in_thread: bool = False) -> Any:
    """Call a sync or async handler. With `in_thread`, a sync one runs in a worker thread (a server with
    concurrent requests: a slow sync handler must not stall the others; its context variables go along).
    If the request is cancelled meanwhile, the caller stops waiting; the thread finishes on its own (a
    sync handler can stop early with `ctx.check_cancelled()`)."""
    if in_thread and not inspect.iscoroutinefunction(fn):
        result = await anyio.to_thread.run_sync(functools.partial(fn, **kwargs), abandon_on_cancel=True)
    else:
        result = fn(**kwargs)
    if inspect.isawaitable(result):
        result = await result
    return result


def named(kind: str, name_or_fn: str | Callable[..., Any] | None, name: str | None) -> tuple[Any, str | None]:
    """The function of a bare `@app.<kind>` (else None) and the name, from either spelling of it."""
    fn = None
    if callable(name_or_fn):
        fn, name_or_fn = name_or_fn, None
    elif name_or_fn is not None and not isinstance(name_or_fn, str):
        raise refused(
            f"@app.{kind} takes the {kind}'s name or nothing, not {type(name_or_fn).__name__} {name_or_fn!r}:"
            f' write @app.{kind}, @app.{kind}() or @app.{kind}("name")'
        )
    if name_or_fn is not None and name is not None:
        raise refused(f'@app.{kind} got two names: write @app.{kind}("{name_or_fn}") or @app.{kind}(name="{name}")')
    name = name_or_fn if name is None else name
    if name is not None and not isinstance(name, str):
        raise refused(f'@app.{kind}\'s name is a str, not {type(name).__name__}: write @app.{kind}(name="...")')
    return fn, name


def needs_uri(kind: str, uri: object, example: str) -> None:
    """Refuse `@app.resource` without a URI (bare, or given the function), or with one that is not a str."""
    if isinstance(uri, str) and uri:
        return
    got = f"the function {getattr(uri, '__name__', uri)!r}" if callable(uri) else f"{type(uri).__name__} {uri!r}"
    raise refused(f'@app.{kind} needs a URI: write @app.{kind}("{example}") above the function (got {got})', uri)
