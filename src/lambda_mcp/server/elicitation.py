"""Typed elicitation: the restricted form schema of a pydantic model, a dataclass or a primitive type, and
the validated answer (`Elicitation`).

The spec allows a flat object of primitive fields (string, number, integer, boolean, single or multiple
choice). `form_for(kind)` derives that schema from the type's annotations and refuses, with the field
and the reason, anything it cannot express (a nested model, a dict, a union of types). A primitive
`kind` (`bool`, `str`, `int`, `float`, a `Literal` or `Enum` of choices) is asked as one field, `value`.
The answer's `content` is validated with pydantic (imported on first use); content that does not
validate ends the tool with an error result naming the fields (servers SHOULD validate, the spec says).
"""

from __future__ import annotations

import dataclasses
import datetime
import enum
import functools
import types
import typing
from dataclasses import dataclass
from typing import Any, Generic, Literal, TypeVar, get_args, get_origin

from .errors import ToolError

T = TypeVar("T")
Action = Literal["accept", "decline", "cancel"]
VALUE_FIELD = "value"
"""The one field of the form a primitive `kind` is asked with."""


class UnsupportedForm(TypeError):
    """The type cannot be asked as an elicitation form (the spec allows flat objects of primitives only)."""


class InvalidAnswer(ToolError):
    """The client accepted the form with content that does not match it: the tool call ends with an
    error result naming the fields (a handler may catch it to ask again under another key)."""


@dataclass(frozen=True)
class Elicitation(Generic[T]):
    """The user's answer to `ctx.elicit(message, Kind)`: `action` is `accept`, `decline` or `cancel`;
    `data` is the validated `Kind` instance on accept (else None); `content` is the raw answer."""

    action: Action
    data: T | None = None
    content: dict[str, Any] | None = None

    @property
    def accepted(self) -> bool:
        return self.action == "accept"


@dataclass(frozen=True)
class Form:
    """The requested schema for a kind, and how to read an accepted answer back into it."""

    kind: Any
    schema: dict[str, Any]
    wrapped: bool
    """A primitive kind, asked as the single field `value`."""
    nullable: tuple[str, ...] = ()
    """Fields typed `X | None` without a default: the form does not require them; absent means None."""

    def answer(self, raw: dict[str, Any]) -> Elicitation[Any]:
        action = raw.get("action")
        if action not in ("accept", "decline", "cancel"):
            raise InvalidAnswer(f"The client answered the form with an unknown action {action!r}")
        content = raw.get("content")
        if action != "accept":
            return Elicitation(action, None, content if isinstance(content, dict) else None)
        if not isinstance(content, dict):
            raise InvalidAnswer("The client accepted the form without its content")
        return Elicitation("accept", self._validate(content), content)

    def _validate(self, content: dict[str, Any]) -> Any:
        from pydantic import ValidationError

        try:
            if self.wrapped:
                if VALUE_FIELD not in content:
                    raise InvalidAnswer(f"The answer to the form is missing the field {VALUE_FIELD!r}")
                return _adapter(self.kind).validate_python(content[VALUE_FIELD])
            return _adapter(self.kind).validate_python({**dict.fromkeys(self.nullable), **content})
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(part) for part in error['loc']) or VALUE_FIELD}: {error['msg']}"
                for error in exc.errors()
            )
            raise InvalidAnswer(f"The answer to the form does not match it: {problems}") from None


@functools.cache
def _adapter(kind: Any) -> Any:
    from pydantic import TypeAdapter

    return TypeAdapter(kind)


@functools.cache
def form_for(kind: Any) -> Form:
    """The form for `kind` (cached per type); raises `UnsupportedForm` naming what cannot be asked."""
    if _is_model(kind) or dataclasses.is_dataclass(kind):
        properties: dict[str, Any] = {}
        required: list[str] = []
        nullable: list[str] = []
        for name, annotation, needed, default, info in _fields(kind):
            try:
                properties[name] = _field_schema(annotation, info)
            except UnsupportedForm as exc:
                raise UnsupportedForm(f"{kind.__name__}.{name} cannot be asked in an elicitation form: {exc}") from None
            if needed and _optional(annotation):
                nullable.append(name)
            elif needed:
                required.append(name)
            elif _json_default(default) is not None:
                properties[name]["default"] = _json_default(default)
        schema: dict[str, Any] = {"type": "object", "properties": properties}
        if required:
            schema["required"] = required
        return Form(kind, schema, wrapped=False, nullable=tuple(nullable))
    try:
        field = _field_schema(kind, None)
    except UnsupportedForm as exc:
        raise UnsupportedForm(f"{kind!r} cannot be asked in an elicitation form: {exc}") from None
    return Form(kind, {"type": "object", "properties": {VALUE_FIELD: field}, "required": [VALUE_FIELD]}, wrapped=True)


def _is_model(kind: Any) -> bool:
    """A pydantic model class, recognised without importing pydantic."""
    return isinstance(kind, type) and hasattr(kind, "model_fields") and hasattr(kind, "model_validate")


def _fields(kind: Any) -> list[tuple[str, Any, bool, Any, Any]]:
    """(name, annotation, required, default or None, pydantic FieldInfo or None) of a model or dataclass."""
    out: list[tuple[str, Any, bool, Any, Any]] = []
    if _is_model(kind):
        for name, info in kind.model_fields.items():
            default = info.default if info.default_factory is None and not info.is_required() else None
            out.append((info.alias or name, info.annotation, info.is_required(), default, info))
        return out
    hints = typing.get_type_hints(kind, include_extras=True)
    for item in dataclasses.fields(kind):
        has_default = item.default is not dataclasses.MISSING
        factory = item.default_factory is not dataclasses.MISSING
        value = item.default if has_default else None
        out.append((item.name, hints[item.name], not (has_default or factory), value, None))
    return out


def _optional(annotation: Any) -> bool:
    return type(None) in get_args(annotation) and _is_union(annotation)


def _is_union(annotation: Any) -> bool:
    return get_origin(annotation) in (typing.Union, types.UnionType)


def _field_schema(annotation: Any, info: Any) -> dict[str, Any]:
    """One property of the form: string, number, integer, boolean, a choice, or a multiple choice."""
    metadata: list[Any] = list(getattr(info, "metadata", None) or [])
    if get_origin(annotation) is typing.Annotated:
        annotation, *extra = get_args(annotation)
        metadata.extend(extra)
    if _is_union(annotation):
        options = [arg for arg in get_args(annotation) if arg is not type(None)]
        if len(options) != 1:
            raise UnsupportedForm("a union of several types; a field has one primitive type")
        annotation = options[0]
    schema = _type_schema(annotation)
    for source in (info, *metadata):
        for key, attribute in (("title", "title"), ("description", "description")):
            value = getattr(source, attribute, None)
            if isinstance(value, str) and key not in schema:
                schema[key] = value
    for constraint in metadata:
        for key, attribute, applies in _CONSTRAINTS:
            value = getattr(constraint, attribute, None)
            if value is not None and schema.get("type") in applies:
                schema[key] = value
    return schema


_CONSTRAINTS = (
    ("minLength", "min_length", ("string",)),
    ("maxLength", "max_length", ("string",)),
    ("minimum", "ge", ("number", "integer")),
    ("maximum", "le", ("number", "integer")),
    ("minItems", "min_length", ("array",)),
    ("maxItems", "max_length", ("array",)),
)


def _type_schema(annotation: Any) -> dict[str, Any]:
    if annotation is bool:
        return {"type": "boolean"}
    if annotation is int:
        return {"type": "integer"}
    if annotation is float:
        return {"type": "number"}
    if annotation is str:
        return {"type": "string"}
    if annotation is datetime.date:
        return {"type": "string", "format": "date"}
    if annotation is datetime.datetime:
        return {"type": "string", "format": "date-time"}
    choices = _choices(annotation)
    if choices is not None:
        return {"type": "string", "enum": choices}
    if get_origin(annotation) in (list, set, frozenset, tuple):
        (item, *rest) = get_args(annotation) or (Any,)
        item_choices = _choices(item)
        if item_choices is None or (rest and rest != [Ellipsis]):
            raise UnsupportedForm("a list field must be a list of choices (a Literal or an Enum of strings)")
        return {"type": "array", "items": {"type": "string", "enum": item_choices}}
    if _is_model(annotation) or dataclasses.is_dataclass(annotation):
        raise UnsupportedForm("a nested object; the spec allows a flat form of primitive fields")
    raise UnsupportedForm(f"type {annotation!r}; use str, int, float, bool, date, a Literal or an Enum of strings")


def _choices(annotation: Any) -> list[str] | None:
    """The string choices of a `Literal[...]` or a string-valued `Enum`, else None."""
    if get_origin(annotation) is Literal:
        values = list(get_args(annotation))
        if not all(isinstance(value, str) for value in values):
            raise UnsupportedForm("choices must be strings")
        return values
    if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        values = [member.value for member in annotation]
        if not all(isinstance(value, str) for value in values):
            raise UnsupportedForm(f"the values of {annotation.__name__} must be strings")
        return values
    return None


def _json_default(value: Any) -> Any:
    """A field default as the form carries it, or None when it has no JSON form."""
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, (str, int, float, bool)):
        return value
    if isinstance(value, (list, tuple, set, frozenset)) and all(isinstance(item, (str, enum.Enum)) for item in value):
        return [item.value if isinstance(item, enum.Enum) else item for item in value]
    return None
