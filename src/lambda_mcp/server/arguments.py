"""Tool arguments: validate a call's arguments and describe them as JSON Schema.

A signature of plain parameters (`int`, `float`, `str`, `bool`, `X | None`, unannotated) is handled
here without pydantic, which keeps pydantic's import (about 50 ms) off the cold path of most apps:
its schema is built by hand in pydantic's exact shape, and arguments that are already of the declared
JSON type pass straight through. Any other value (a string for an `int`, a missing required argument)
goes to the pydantic model, built on first need, so coercions and error messages are pydantic's in
every case. Any other signature uses the pydantic model from the start, so a parameter type that has
no JSON Schema is refused when the handler is declared, in one line naming the parameter and its type.
"""

from __future__ import annotations

import inspect
import types
import typing
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Union

from ..protocol.values import Value, set_field
from ._refusals import refused

if TYPE_CHECKING:
    from pydantic import BaseModel, ValidationError

_JSON_TYPES: dict[Any, str] = {int: "integer", float: "number", str: "string", bool: "boolean"}
_FLOAT_EXACT = 2**53  # ints a float holds exactly: pydantic's float(value) gives the same number


class InvalidArguments(Exception):
    """The arguments do not fit the signature; the message names each field and what is wrong."""


class _Plain(Value):
    """One parameter of a tool whose arguments need no pydantic: a plain type, checked by hand."""

    __slots__ = ("name", "kind", "optional", "required", "default")
    name: str
    kind: Any  # int, float, str, bool, or Any
    optional: bool  # `X | None`
    required: bool
    default: Any

    def __init__(self, name: str, kind: Any, optional: bool, required: bool, default: Any) -> None:
        set_field(self, "name", name)
        set_field(self, "kind", kind)
        set_field(self, "optional", optional)
        set_field(self, "required", required)
        set_field(self, "default", default)


class Arguments:
    """A handler's parameters (less its context): `schema` for listing, `validate` for calling."""

    def __init__(self, fn: Callable[..., Any], hints: dict[str, Any], skip: str | None, owner: str = "handler") -> None:
        """`owner` names the handler in a refusal (`tool 'add'`): `DeclarationError` (a `TypeError`) for a
        parameter type that has no JSON Schema."""
        self._fn, self._skip = fn, skip
        self._model: type[BaseModel] | None = None
        self._plain = _plain_parameters(fn, hints, skip)
        self.schema = _plain_schema(self._plain) if self._plain is not None else self._described(hints, owner)

    @property
    def plain(self) -> bool:
        """True when calls with well-typed arguments never need pydantic."""
        return self._plain is not None

    def model(self) -> type[BaseModel]:
        """The pydantic model of the parameters, built once on first need."""
        if self._model is None:
            from . import _signature

            self._model = _signature.arguments_model(self._fn, self._skip)
        return self._model

    def _described(self, hints: dict[str, Any], owner: str) -> dict[str, Any]:
        try:
            return _model_schema(self.model())
        except Exception as exc:  # pydantic's own error is long and names neither the handler nor the parameter
            reason, parameter = _unsupported(self._fn, hints, self._skip, owner, exc)
            raise refused(reason, self._fn, parameter) from None

    def validate(self, arguments: dict[str, Any]) -> dict[str, Any]:
        """Keyword arguments for the handler, or `InvalidArguments`."""
        if self._plain is not None:
            kwargs = _pass_through(self._plain, arguments)
            if kwargs is not None:
                return kwargs
        from pydantic import ValidationError

        model = self.model()
        try:
            instance = model.model_validate(arguments)
        except ValidationError as exc:
            raise InvalidArguments(_brief(exc)) from None
        return {name: getattr(instance, name) for name in model.model_fields}


def _plain_parameters(fn: Callable[..., Any], hints: dict[str, Any], skip: str | None) -> tuple[_Plain, ...] | None:
    plain: list[_Plain] = []
    for name, param in inspect.signature(fn).parameters.items():
        if name == skip or param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            continue
        kind, optional = _plain_kind(hints.get(name, Any))
        if kind is None:
            return None
        required = param.default is inspect.Parameter.empty
        default = None if required else param.default
        if not required and not _fits(kind, optional, default):
            return None  # pydantic shows such a default as given: keep its schema exact
        plain.append(_Plain(name, kind, optional, required, default))
    return tuple(plain)


def _plain_kind(hint: Any) -> tuple[Any, bool]:
    if hint is Any or hint in _JSON_TYPES:
        return hint, False
    if typing.get_origin(hint) in (Union, types.UnionType):
        members = typing.get_args(hint)
        if len(members) == 2 and type(None) in members:
            (kind,) = (m for m in members if m is not type(None))
            if kind in _JSON_TYPES:
                return kind, True
    return None, False


def _fits(kind: Any, optional: bool, value: Any) -> bool:
    if value is None:
        return optional or kind is Any
    return kind is Any or type(value) is kind


def _pass_through(plain: tuple[_Plain, ...], arguments: dict[str, Any]) -> dict[str, Any] | None:
    """The keyword arguments when every value is already what pydantic would return; else None."""
    kwargs: dict[str, Any] = {}
    for p in plain:
        if p.name not in arguments:
            if p.required:
                return None
            kwargs[p.name] = p.default
            continue
        value = arguments[p.name]
        if p.kind is float and type(value) is int and -_FLOAT_EXACT <= value <= _FLOAT_EXACT:
            value = float(value)
        elif not _fits(p.kind, p.optional, value):
            return None
        kwargs[p.name] = value
    return kwargs


def _plain_schema(plain: tuple[_Plain, ...]) -> dict[str, Any]:
    """What pydantic's `model_json_schema()` gives for these fields (less the model title)."""
    properties: dict[str, Any] = {}
    for p in plain:
        prop: dict[str, Any] = {}
        if p.kind is not Any:
            json_type = {"type": _JSON_TYPES[p.kind]}
            prop = {"anyOf": [json_type, {"type": "null"}]} if p.optional else json_type
        if not p.required:
            prop["default"] = p.default
        prop["title"] = p.name.title().replace("_", " ").strip()
        properties[p.name] = prop
    schema: dict[str, Any] = {"properties": properties}
    required = [p.name for p in plain if p.required]
    if required:
        schema["required"] = required
    schema["type"] = "object"
    return schema


def _model_schema(model: type[BaseModel]) -> dict[str, Any]:
    schema = model.model_json_schema()
    schema.pop("title", None)
    schema.setdefault("properties", {})
    return schema


def _unsupported(
    fn: Callable[..., Any], hints: dict[str, Any], skip: str | None, owner: str, exc: Exception
) -> tuple[str, str | None]:
    """One line naming the first parameter whose type has no JSON Schema, and that parameter (on the refusal
    path only)."""
    from pydantic import ConfigDict, create_model

    from ._signature import type_name

    config = ConfigDict(arbitrary_types_allowed=True)
    for name in inspect.signature(fn).parameters:
        if name == skip:
            continue
        hint = hints.get(name, Any)
        if isinstance(hint, str):  # a forward reference typing could not resolve
            try:
                eval(hint, getattr(fn, "__globals__", {}))  # noqa: S307 - an annotation, as typing evaluates it
                continue
            except Exception:
                return (
                    f"{owner}: parameter {name!r} has type {hint!r}, which names something not defined"
                    " at the module level of its function"
                ), name
        try:
            create_model("Parameter", __config__=config, value=(hint, ...)).model_json_schema()
        except Exception:
            return (
                f"{owner}: parameter {name!r} has type {type_name(hint)}, which has no JSON Schema; use int, float,"
                " str, bool, a Literal, an Enum, a list or dict of these, a pydantic model, a dataclass or a TypedDict"
            ), name
    return f"{owner}: the kit cannot describe its parameters as JSON Schema ({type(exc).__name__})", None


def _brief(exc: ValidationError) -> str:
    return "; ".join(f"{'.'.join(str(p) for p in e['loc']) or 'arguments'}: {e['msg']}" for e in exc.errors())
