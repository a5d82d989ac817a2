"""Registered prompts: their argument list, and converting a handler's return value to messages."""

from __future__ import annotations

import inspect
import types
import typing
from collections.abc import Callable
from typing import Annotated, Any, Literal, Union

from ..protocol.errors import invalid_params
from ..protocol.values import lean_dataclass
from . import _signature
from ._models import loaded_wire_types
from ._refusals import refused
from .context import Context
from .tools import to_content


@lean_dataclass  # a dataclass (server/mount/ copies prompts with `dataclasses.replace`), built lean
class Prompt:
    """A registered prompt: its function, name, definition and the parameter that takes the context."""

    fn: Callable[..., Any]
    name: str
    definition: dict[str, Any]
    context_param: str | None
    required: tuple[str, ...]
    scopes: frozenset[str] = frozenset()
    """OAuth scopes a caller needs to see and get it."""

    async def get(self, arguments: dict[str, Any], ctx: Context) -> dict[str, Any]:
        missing = [arg for arg in self.required if arg not in arguments]
        if missing:
            raise invalid_params(f"Missing required arguments for prompt {self.name}: {', '.join(missing)}")
        known = {arg["name"] for arg in self.definition.get("arguments", [])}
        kwargs: dict[str, Any] = {k: v for k, v in arguments.items() if k in known}
        if self.context_param:
            kwargs[self.context_param] = ctx
        value = await _signature.call(self.fn, kwargs, in_thread=ctx.sync_in_thread)
        return _to_result(value)


def _to_result(value: Any) -> dict[str, Any]:
    wire = loaded_wire_types()
    if wire is not None and isinstance(value, wire.GetPromptResult):
        dumped: dict[str, Any] = value.dump()
        return dumped
    if isinstance(value, dict) and "messages" in value:
        return value
    items = value if isinstance(value, list) else [value]
    messages: list[dict[str, Any]] = []
    for item in items:
        if wire is not None and isinstance(item, wire.PromptMessage):
            messages.append(item.dump())
        elif isinstance(item, dict) and "role" in item:
            messages.append(item)
        else:
            messages.extend({"role": "user", "content": block} for block in to_content(item))
    return {"messages": messages}


def build_prompt(
    fn: Callable[..., Any],
    *,
    name: str | None,
    title: str | None,
    description: str | None,
    icons: list[dict[str, Any]] | None,
    meta: dict[str, Any] | None,
    argument_descriptions: dict[str, str] | None,
) -> Prompt:
    """The prompt `fn` serves; `DeclarationError` (one line, naming the prompt) for `*args`, `**kwargs` or a
    parameter annotated with a type other than `str`: prompt arguments arrive as strings."""
    hints = _signature.type_hints(fn)
    ctx_param = _signature.context_parameter(fn, hints)
    prompt_name = name or fn.__name__
    _signature.refuse_variadic(fn, f"prompt {prompt_name!r}")
    arguments: list[dict[str, Any]] = []
    required: list[str] = []
    for param in inspect.signature(fn).parameters.values():
        if param.name == ctx_param:
            continue
        if not _takes_string(hints.get(param.name, Any)):
            raise refused(
                f"prompt {prompt_name!r}: parameter {param.name!r} has type"
                f" {_signature.type_name(hints[param.name])}, but prompt arguments arrive as strings:"
                " annotate it str (or leave it unannotated) and convert it in the prompt",
                fn,
                param.name,
            )
        arg: dict[str, Any] = {"name": param.name}
        if argument_descriptions and param.name in argument_descriptions:
            arg["description"] = argument_descriptions[param.name]
        if param.default is inspect.Parameter.empty:
            arg["required"] = True
            required.append(param.name)
        arguments.append(arg)
    definition: dict[str, Any] = {"name": prompt_name}
    if title:
        definition["title"] = title
    doc = description if description is not None else (fn.__doc__ or "").strip()
    if doc:
        definition["description"] = doc
    if arguments:
        definition["arguments"] = arguments
    if icons:
        definition["icons"] = icons
    if meta:
        definition["_meta"] = meta
    return Prompt(fn=fn, name=prompt_name, definition=definition, context_param=ctx_param, required=tuple(required))


def _takes_string(hint: Any) -> bool:
    """Whether a parameter annotated `hint` accepts the string a prompt argument is (an annotation typing
    could not resolve is left alone, as before)."""
    if hint is Any or hint is str or isinstance(hint, str):
        return True
    origin, members = typing.get_origin(hint), typing.get_args(hint)
    if origin is Annotated:
        return _takes_string(members[0])
    if origin is Literal:
        return all(isinstance(member, str) for member in members)
    if origin in (Union, types.UnionType):
        return all(member is type(None) or _takes_string(member) for member in members)
    return False
