"""`Completion`: the app's `completion/complete` handler, and how it is called.

`fn(ref, argument, context)` returns the suggested values (a list of strings, or an awaitable of one).
A parameter annotated `Context` receives the request's context, so the handler knows the caller
(`ctx.principal`, `ctx.scopes`) like any other handler. A completion naming a prompt or resource
template the caller's scopes do not allow never reaches it (403).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from . import _signature
from .context import Context


class Completion:
    def __init__(self, fn: Callable[..., Any]) -> None:
        self.fn = fn
        self.context_parameter = _signature.context_parameter(fn, _signature.type_hints(fn))

    async def complete(
        self, ref: dict[str, Any], argument: dict[str, Any], context: dict[str, Any], ctx: Context
    ) -> list[Any]:
        kwargs = {self.context_parameter: ctx} if self.context_parameter else {}
        produced = self.fn(ref, argument, context, **kwargs)
        if not isinstance(produced, list):
            produced = await produced
        return list(produced)
