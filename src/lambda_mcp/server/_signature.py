"""Read a handler's signature (its pydantic arguments model, its `Context` parameter) and call it."""

from __future__ import annotations

import functools
import inspect
import typing
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import anyio.to_thread

from .context import Context

if TYPE_CHECKING:
    from pydantic import BaseModel


def context_parameter(fn: Callable[..., Any], hints: dict[str, Any]) -> str | None:
    """The name of the parameter annotated `Context`, if any."""
    for name in inspect.signature(fn).parameters:
        hint = hints.get(name)
        if inspect.isclass(hint) and issubclass(hint, Context):
            return name
    return None


def arguments_model(fn: Callable[..., Any], skip: str | None) -> type[BaseModel]:
    """A model whose fields are the handler's parameters (less the context), for validation and schema."""
    from pydantic import ConfigDict, create_model

    hints = typing.get_type_hints(fn, include_extras=True)
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
