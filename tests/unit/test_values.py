"""The value classes (`protocol/values.py`): a `Value` or `Struct` behaves as the dataclass it replaced
(fields, equality, hashing, immutability, copies), and a `lean_dataclass` stays a real dataclass."""

from __future__ import annotations

import copy
import dataclasses
import json
import pickle
from typing import Any

import pytest

from lambda_mcp.config import Settings
from lambda_mcp.protocol.ids import CallInputId, CallStream, EventId
from lambda_mcp.protocol.values import Struct, Value, lean_dataclass, set_field
from lambda_mcp.server.middleware import RequestInfo
from lambda_mcp.storage.records import CallRecord, StepRecord, TaskRecord


class Point(Value):
    __slots__ = ("x", "tags")
    x: int
    tags: list[str]

    def __init__(self, x: int, tags: list[str] | None = None) -> None:
        set_field(self, "x", x)
        set_field(self, "tags", [] if tags is None else tags)


class Point3(Point):
    __slots__ = ("z",)
    z: int

    def __init__(self, x: int, tags: list[str] | None = None, z: int = 0) -> None:
        super().__init__(x, tags)
        set_field(self, "z", z)


class Counter(Struct):
    __slots__ = ("n",)
    n: int

    def __init__(self, n: int = 0) -> None:
        self.n = n


def test_a_value_compares_shows_and_hashes_by_its_fields_bases_first() -> None:
    assert Point3._fields == ("x", "tags", "z")
    assert Point3(1, ["a"], 2) == Point3(1, ["a"], 2)
    assert Point3(1, z=2) != Point3(1, z=3)
    assert Point(1) != Point3(1)  # another class is never equal, as with dataclasses
    assert repr(Point3(1, ["a"], 2)) == "Point3(x=1, tags=['a'], z=2)"
    assert hash(CallStream("r")) == hash(CallStream("r")) and len({CallStream("r"), CallStream("r")}) == 1
    assert EventId("s", 1, "ab") in {EventId("s", 1, "ab")}
    assert Point.__match_args__ == ("x", "tags")  # type: ignore[attr-defined]


def test_a_value_is_frozen_and_has_no_other_attributes() -> None:
    point = Point(1)
    with pytest.raises(dataclasses.FrozenInstanceError):
        point.x = 2
    with pytest.raises(dataclasses.FrozenInstanceError):
        del point.x
    with pytest.raises(TypeError, match="__slots__"):

        class Loose(Value):  # a subclass that names no fields would have a __dict__
            pass


def test_a_struct_is_mutable_and_unhashable_as_a_mutable_dataclass() -> None:
    counter = Counter()
    counter.n += 1
    assert counter == Counter(1)
    with pytest.raises(TypeError):
        hash(counter)
    with pytest.raises(AttributeError):
        counter.other = 1  # type: ignore[attr-defined]


def test_replace_goes_through_init_and_as_dict_is_shallow() -> None:
    point = Point3(1, ["a"], 2)
    moved = point.replace(z=5)
    assert moved == Point3(1, ["a"], 5) and moved.tags is point.tags
    with pytest.raises(TypeError):
        point.replace(w=1)
    record = CallRecord("s", "call~Nw", "n", {"id": 1}, 1.0, 2.0)
    assert record.replace(delivered=3).delivered == 3 and record.delivered == 0
    assert record.as_dict()["request"] is record.request
    assert TaskRecord.from_stored(json.loads(json.dumps(_task().as_dict()))) == _task()


@pytest.mark.parametrize(
    "value",
    [
        Point3(1, ["a"], 2),
        CallInputId(CallStream(7), "k", "n"),
        StepRecord("s", True, {"x": [1]}, "run"),
        CallRecord("s", "call~Nw", "n", {"id": 1}, 1.0, 2.0, answers={"k": {"a": 1}}),
    ],
)
def test_copies_deep_copies_and_pickles_are_equal_and_independent(value: Any) -> None:
    assert copy.copy(value) == value
    deep = copy.deepcopy(value)
    assert deep == value and deep is not value
    assert pickle.loads(pickle.dumps(value)) == value


def test_a_lean_dataclass_is_a_dataclass_with_its_defaults_and_factories() -> None:
    @lean_dataclass(frozen=True)
    class Options:
        name: str
        size: int = 3
        tags: dict[str, str] = dataclasses.field(default_factory=dict)
        secret: str = dataclasses.field(default="", repr=False, compare=False)

    options = Options("a", secret="s")
    assert dataclasses.is_dataclass(options) and [f.name for f in dataclasses.fields(Options)][:2] == ["name", "size"]
    assert options == Options("a") and options.tags == {} and options.tags is not Options("a").tags
    assert repr(options).endswith(".Options(name='a', size=3, tags={})")  # a dataclass's: qualname, repr fields
    assert dataclasses.replace(options, size=4) == Options("a", 4)
    with pytest.raises(dataclasses.FrozenInstanceError):
        options.size = 5  # type: ignore[misc]
    with pytest.raises(TypeError, match="missing required argument: 'name'"):
        Options()  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="unexpected keyword argument 'colour'"):
        Options("a", colour="red")  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="multiple values for argument 'name'"):
        Options("a", name="b")  # type: ignore[misc]


def test_settings_and_request_info_stay_dataclasses_users_replace() -> None:
    settings = Settings(table_name="t")
    changed = dataclasses.replace(settings, auth="jwt")
    assert (changed.auth, changed.table_name, settings.auth) == ("jwt", "t", "none")
    assert changed == Settings(table_name="t", auth="jwt") and changed != settings
    with pytest.raises(dataclasses.FrozenInstanceError):
        settings.auth = "jwt"  # type: ignore[misc]
    request = RequestInfo("tools/call", {"a": 1}, None, "modern", "2026-07-28")
    assert dataclasses.replace(request, params={"b": 2}).params == {"b": 2}
    assert {f.name: f.default for f in dataclasses.fields(RequestInfo)}["session_id"] is None


def _task() -> TaskRecord:
    return TaskRecord("t1", "anonymous", "tools/call", {"name": "x"}, 1.0, 2.0, 1000, 500, claims={"sub": "u"})
