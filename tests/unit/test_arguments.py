"""Tool arguments without pydantic: the hand-built schema and the pass-through must be exactly what the
pydantic model gives, for every plain signature and every argument value."""

from __future__ import annotations

import inspect
import keyword
import typing
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, ValidationError

from lambda_mcp.server import _signature
from lambda_mcp.server.arguments import Arguments, InvalidArguments

PLAIN_KINDS: list[Any] = [int, float, str, bool, Any, int | None, float | None, str | None, bool | None]
DEFAULTS: dict[Any, list[Any]] = {
    int: [0, 7, -3],
    float: [0.5, 2.0],
    str: ["", "x", "é"],
    bool: [True, False],
    Any: [None, 3, "s"],
}


def _usable_name(name: str) -> bool:
    """A parameter name Python and pydantic both take (no keyword, no BaseModel attribute)."""
    return not (keyword.iskeyword(name) or name.endswith("_") or name.startswith("model_") or hasattr(BaseModel, name))


NAMES = st.lists(
    st.from_regex(r"[a-z][a-z0-9_]{0,6}", fullmatch=True).filter(_usable_name),
    min_size=0,
    max_size=5,
    unique=True,
)


def _base(kind: Any) -> Any:
    members = [m for m in typing.get_args(kind) if m is not type(None)]
    return members[0] if members else kind


@st.composite
def plain_signatures(draw: st.DrawFn) -> tuple[inspect.Signature, dict[str, Any]]:
    """Required parameters first, then ones with a default of their type (or None when optional)."""
    params: list[inspect.Parameter] = []
    hints: dict[str, Any] = {}
    names = draw(NAMES)
    n_required = draw(st.integers(0, len(names)))
    for i, name in enumerate(names):
        kind = draw(st.sampled_from(PLAIN_KINDS))
        default: Any = inspect.Parameter.empty
        if i >= n_required:
            choices = list(DEFAULTS[_base(kind)])
            if typing.get_origin(kind) is not None:
                choices.append(None)
            default = draw(st.sampled_from(choices))
        params.append(inspect.Parameter(name, inspect.Parameter.POSITIONAL_OR_KEYWORD, default=default))
        hints[name] = kind
    return inspect.Signature(params), hints


def _function(signature: inspect.Signature, hints: dict[str, Any]) -> Any:
    def handler(**kwargs: Any) -> None:
        return None

    handler.__signature__ = signature  # type: ignore[attr-defined]
    handler.__annotations__ = dict(hints)
    return handler


def _pydantic(fn: Any, arguments: dict[str, Any]) -> dict[str, Any] | str:
    model = _signature.arguments_model(fn, None)
    try:
        instance = model.model_validate(arguments)
    except ValidationError as exc:
        return f"invalid: {len(exc.errors())}"
    return {name: getattr(instance, name) for name in model.model_fields}


def _kit(arguments_: Arguments, arguments: dict[str, Any]) -> dict[str, Any] | str:
    try:
        return arguments_.validate(arguments)
    except InvalidArguments as exc:
        return f"invalid: {str(exc).count('; ') + 1}"


JSON_VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**60), 2**60),
    st.floats(allow_nan=False),
    st.text(max_size=5),
    st.sampled_from(["3", "1.5", "true", "no", " 4 "]),
    st.lists(st.integers(), max_size=2),
)


@settings(max_examples=300, deadline=None)
@given(plain_signatures())
def test_a_plain_signatures_schema_is_exactly_pydantics(sig: tuple[inspect.Signature, dict[str, Any]]) -> None:
    fn = _function(*sig)
    arguments = Arguments(fn, sig[1], None)
    assert arguments.plain
    expected = _signature.arguments_model(fn, None).model_json_schema()
    expected.pop("title")
    assert arguments.schema == expected


@settings(max_examples=400, deadline=None)
@given(plain_signatures(), st.data())
def test_plain_validation_returns_what_pydantic_returns_or_refuses_alike(
    sig: tuple[inspect.Signature, dict[str, Any]], data: st.DataObject
) -> None:
    fn = _function(*sig)
    names = list(sig[0].parameters)
    keys = data.draw(st.lists(st.sampled_from([*names, "extra"]), unique=True)) if names else []
    arguments = {key: data.draw(JSON_VALUES) for key in keys}
    expected, got = _pydantic(fn, arguments), _kit(Arguments(fn, sig[1], None), arguments)
    assert got == expected
    if isinstance(expected, dict):
        assert isinstance(got, dict)
        assert [type(v) for v in got.values()] == [type(v) for v in expected.values()]  # 1.0, not 1


def test_a_richer_signature_uses_the_pydantic_model_and_its_messages() -> None:
    def handler(items: list[int], limit: int = 3) -> None:
        return None

    arguments = Arguments(handler, typing.get_type_hints(handler), None)
    assert not arguments.plain
    assert arguments.schema["properties"]["items"] == {"items": {"type": "integer"}, "title": "Items", "type": "array"}
    assert arguments.validate({"items": ["1", 2]}) == {"items": [1, 2], "limit": 3}
    with pytest.raises(InvalidArguments, match=r"items\.0: Input should be a valid integer"):
        arguments.validate({"items": ["x"]})


def test_a_default_of_another_type_keeps_pydantics_schema() -> None:
    def handler(count: int = "many") -> None:  # type: ignore[assignment]
        return None

    arguments = Arguments(handler, {"count": int}, None)
    assert not arguments.plain
    assert arguments.schema["properties"]["count"] == {"default": "many", "title": "Count", "type": "integer"}


def test_the_context_parameter_is_left_out() -> None:
    def handler(ctx: object, city: str) -> None:
        return None

    arguments = Arguments(handler, {"ctx": object, "city": str}, "ctx")
    assert arguments.schema == {
        "properties": {"city": {"title": "City", "type": "string"}},
        "required": ["city"],
        "type": "object",
    }
    assert arguments.validate({"city": "Oslo"}) == {"city": "Oslo"}
    with pytest.raises(InvalidArguments, match="city: Field required"):
        arguments.validate({})
