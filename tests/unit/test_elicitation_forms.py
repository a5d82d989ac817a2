"""Typed elicitation: the restricted form schema derived from a type, and the answer read back into it."""

from __future__ import annotations

import datetime
import enum
from dataclasses import dataclass, field
from typing import Annotated, Literal

import pytest
from pydantic import BaseModel, Field

from lambda_mcp.server.elicitation import InvalidAnswer, UnsupportedForm, form_for
from lambda_mcp.server.sampling import Sampled, sampling_params
from tests.support.schema import errors_for


class Color(enum.Enum):
    RED = "red"
    BLUE = "blue"


class Booking(BaseModel):
    guest: str = Field(min_length=2, max_length=40, title="Guest", description="Who stays")
    nights: int = Field(ge=1, le=30)
    rate: float = 99.5
    breakfast: bool = False
    room: Literal["single", "double"] = "double"
    color: Color | None = None
    extras: list[Literal["parking", "late checkout"]] = Field(default_factory=list)
    arrival: datetime.date | None = None


@dataclass
class Survey:
    score: Annotated[int, "stars"]
    comment: str = ""
    tags: list[Color] = field(default_factory=list)


def test_a_pydantic_model_becomes_a_flat_form_of_primitives_that_the_2025_11_25_schema_accepts() -> None:
    schema = form_for(Booking).schema
    assert schema["required"] == ["guest", "nights"]
    props = schema["properties"]
    assert props["guest"] == {
        "type": "string",
        "title": "Guest",
        "description": "Who stays",
        "minLength": 2,
        "maxLength": 40,
    }
    assert props["nights"] == {"type": "integer", "minimum": 1, "maximum": 30}
    assert props["rate"] == {"type": "number", "default": 99.5}
    assert props["breakfast"] == {"type": "boolean", "default": False}
    assert props["room"] == {"type": "string", "enum": ["single", "double"], "default": "double"}
    assert props["color"] == {"type": "string", "enum": ["red", "blue"]}
    assert props["extras"] == {"type": "array", "items": {"type": "string", "enum": ["parking", "late checkout"]}}
    assert props["arrival"] == {"type": "string", "format": "date"}
    request = {"mode": "form", "message": "Book?", "requestedSchema": schema}
    assert errors_for(request, "2025-11-25", "ElicitRequestFormParams") == []


def test_the_answer_is_validated_into_the_model() -> None:
    answer = form_for(Booking).answer(
        {"action": "accept", "content": {"guest": "Ana", "nights": 2, "color": "blue", "extras": ["parking"]}}
    )
    assert answer.accepted and isinstance(answer.data, Booking)
    assert (answer.data.guest, answer.data.nights, answer.data.color, answer.data.extras) == (
        "Ana",
        2,
        Color.BLUE,
        ["parking"],
    )
    assert answer.data.arrival is None  # `X | None` fields are optional in the form


def test_a_dataclass_and_primitive_kinds() -> None:
    survey = form_for(Survey)
    assert survey.schema == {
        "type": "object",
        "properties": {
            "score": {"type": "integer"},
            "comment": {"type": "string", "default": ""},
            "tags": {"type": "array", "items": {"type": "string", "enum": ["red", "blue"]}},
        },
        "required": ["score"],
    }
    assert survey.answer({"action": "accept", "content": {"score": "4"}}).data == Survey(4)
    assert form_for(bool).schema == {
        "type": "object",
        "properties": {"value": {"type": "boolean"}},
        "required": ["value"],
    }
    assert form_for(Literal["a", "b"]).answer({"action": "accept", "content": {"value": "b"}}).data == "b"
    assert form_for(Color).answer({"action": "accept", "content": {"value": "red"}}).data is Color.RED
    declined = form_for(int).answer({"action": "decline"})
    assert (declined.action, declined.data, declined.accepted) == ("decline", None, False)


class Address(BaseModel):
    street: str


class Person(BaseModel):
    name: str
    address: Address


@pytest.mark.parametrize(
    ("kind", "words"),
    [
        (Person, ["Person.address", "nested object"]),
        (dict[str, int], ["cannot be asked", "dict"]),
        (list[int], ["list of choices"]),
        (int | str, ["union"]),
        (Literal[1, 2], ["strings"]),
    ],
)
def test_what_the_spec_cannot_express_is_refused_with_the_field_and_the_reason(kind: object, words: list[str]) -> None:
    with pytest.raises(UnsupportedForm) as refused:
        form_for(kind)
    assert all(word in str(refused.value) for word in words), str(refused.value)


@pytest.mark.parametrize(
    ("raw", "words"),
    [
        ({"action": "accept", "content": {"guest": "A", "nights": 0}}, ["guest", "nights"]),
        ({"action": "accept", "content": {"nights": 2}}, ["guest", "required"]),
        ({"action": "accept"}, ["without its content"]),
        ({"action": "maybe"}, ["unknown action"]),
    ],
)
def test_an_answer_that_does_not_fit_is_an_invalid_answer_naming_the_problem(
    raw: dict[str, object], words: list[str]
) -> None:
    with pytest.raises(InvalidAnswer) as invalid:
        form_for(Booking).answer(raw)  # type: ignore[arg-type]
    assert all(word in str(invalid.value) for word in words), str(invalid.value)


def test_sampled_reads_text_from_a_block_or_a_list_and_keeps_the_raw_result() -> None:
    one = Sampled.of(
        {"role": "assistant", "content": {"type": "text", "text": "hi"}, "model": "m", "stopReason": "endTurn"}
    )
    assert (one.text, one.model, one.stop_reason, one.content) == ("hi", "m", "endTurn", {"type": "text", "text": "hi"})
    many = Sampled.of(
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "a"},
                {"type": "tool_use", "id": "1", "name": "f", "input": {}},
                {"type": "text", "text": "b"},
            ],
            "model": "m",
        }
    )
    assert many.text == "ab" and many.tool_uses == [{"type": "tool_use", "id": "1", "name": "f", "input": {}}]
    assert (
        Sampled.of({"role": "assistant", "content": {"type": "image", "data": "", "mimeType": "image/png"}}).text == ""
    )


def test_sampling_params_carry_every_option_in_the_wire_names() -> None:
    params = sampling_params(
        "hello",
        max_tokens=10,
        system_prompt="terse",
        temperature=0.5,
        model_preferences={"intelligencePriority": 0.9},
        stop_sequences=["\n"],
        tools=[{"name": "f", "inputSchema": {"type": "object"}}],
        tool_choice="required",
        options={"includeContext": "none"},
    )
    assert params == {
        "messages": [{"role": "user", "content": {"type": "text", "text": "hello"}}],
        "maxTokens": 10,
        "systemPrompt": "terse",
        "temperature": 0.5,
        "modelPreferences": {"intelligencePriority": 0.9},
        "stopSequences": ["\n"],
        "tools": [{"name": "f", "inputSchema": {"type": "object"}}],
        "toolChoice": {"mode": "required"},
        "includeContext": "none",
    }
    assert errors_for(params, "2025-11-25", "CreateMessageRequestParams") == []
