"""Value classes built without `dataclasses`' code generation: `Struct` (mutable) and `Value` (immutable)
give a slotted class one `__repr__`, `__eq__`, `__hash__`, `replace` and copy support over its fields,
defined once here.

A dataclass compiles its `__init__`, `__repr__` and `__eq__` (frozen: `__hash__`, `__setattr__` and
`__delattr__` too) from source, for every class: about 4 million instructions a class at import, which
every cold start pays for every class on its path. A subclass here names its fields in `__slots__`, in
order, annotates them for the type checker, and writes the `__init__` a dataclass would generate (a
`Value`'s sets each field with `set_field`):

```python
class Point(Value):
    __slots__ = ("x", "y")
    x: int
    y: int

    def __init__(self, x: int, y: int = 0) -> None:
        set_field(self, "x", x)
        set_field(self, "y", y)
```

A `Struct` or `Value` behaves as a dataclass: its fields are the `__slots__` of its bases, then its own;
`==` compares the fields of two instances of one class (another class: `NotImplemented`); a `Value`
hashes its fields, a `Struct` is unhashable; `replace(**changes)` is `dataclasses.replace` (a copy
through `__init__`, whose parameters are the fields) and `as_dict()` a shallow `dataclasses.asdict`;
`copy`, `deepcopy` and pickle work. It is no dataclass: `dataclasses.replace`, `fields` and `asdict`
refuse it (and the type checker says so).

A class that must stay a dataclass (users call `dataclasses.replace`, `fields` or `asdict` on it) and is
built rarely (settings, a tool's declaration) is written as a dataclass and decorated with
`lean_dataclass` instead: a real dataclass, whose `__init__`, `__repr__`, `__eq__`, `__hash__` and
frozen `__setattr__` are the generic ones defined here rather than code compiled for it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from operator import attrgetter
from typing import TYPE_CHECKING, Any, ClassVar, Self, TypeVar, dataclass_transform, overload

__all__ = ["Struct", "Value", "lean_dataclass", "set_field"]
C = TypeVar("C", bound=type)

set_field = object.__setattr__
"""Set a field of a `Value` (in its `__init__`: assigning raises, it is frozen)."""


def _getter(names: tuple[str, ...]) -> Callable[[Any], tuple[Any, ...]]:
    """A function from an instance to the tuple of its `names` fields."""
    if len(names) > 1:
        return attrgetter(*names)
    if names:
        one = attrgetter(names[0])
        return lambda instance: (one(instance),)
    return lambda instance: ()


class Struct:
    """A slotted class compared, shown and copied by its fields (`__slots__`); mutable and unhashable."""

    __slots__ = ()
    _fields: ClassVar[tuple[str, ...]] = ()
    """The names of its fields, in order."""

    @staticmethod
    def _values(instance: Any) -> tuple[Any, ...]:
        """The fields of `instance`, in order (each subclass gets its own, an `attrgetter`)."""
        return ()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "__slots__" not in cls.__dict__:
            raise TypeError(
                f"{cls.__qualname__} must declare its fields in __slots__ (a Struct or Value has no __dict__)"
            )
        names: list[str] = []
        for klass in reversed(cls.__mro__):
            slots = klass.__dict__.get("__slots__", ())
            names += [slots] if isinstance(slots, str) else [name for name in slots if name != "__weakref__"]
        cls._fields = tuple(names)
        type.__setattr__(cls, "_values", staticmethod(_getter(cls._fields)))  # a method the type checker keeps
        type.__setattr__(cls, "__match_args__", cls._fields)  # as a dataclass: `case Point(x, y)`

    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in self._fields)
        return f"{type(self).__qualname__}({shown})"

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self._values(self) == self._values(other)

    __hash__ = None  # type: ignore[assignment]  # mutable: as a dataclass with eq and not frozen

    def replace(self, **changes: Any) -> Self:
        """A copy with `changes` (field=value) made, built through `__init__` (`dataclasses.replace`)."""
        cls: Any = type(self)
        copy: Self = cls(**{name: getattr(self, name) for name in self._fields} | changes)
        return copy

    def as_dict(self) -> dict[str, Any]:
        """Its fields by name: a shallow `dataclasses.asdict` (the values themselves, not copies)."""
        return dict(zip(self._fields, self._values(self), strict=True))

    def __getstate__(self) -> tuple[Any, ...]:
        return self._values(self)

    def __setstate__(self, state: tuple[Any, ...]) -> None:
        for name, value in zip(self._fields, state, strict=True):
            object.__setattr__(self, name, value)


class Value(Struct):
    """An immutable `Struct`: assigning or deleting a field raises `dataclasses.FrozenInstanceError` (as a
    frozen dataclass), and it hashes its fields (usable in sets and as a key when they are)."""

    __slots__ = ()

    def __hash__(self) -> int:  # type: ignore[override]  # a Struct is unhashable, a Value is
        return hash(self._values(self))

    if not TYPE_CHECKING:  # at run time only: the type checker keeps refusing unknown attributes

        def __setattr__(self, name: str, value: Any) -> None:
            raise _frozen(f"cannot assign to field {name!r}")

        def __delattr__(self, name: str) -> None:
            raise _frozen(f"cannot delete field {name!r}")


def _frozen(message: str) -> AttributeError:
    return dataclasses.FrozenInstanceError(message)


@overload
def lean_dataclass(cls: C, /) -> C: ...
@overload
def lean_dataclass(*, frozen: bool = False) -> Callable[[C], C]: ...
@dataclass_transform(field_specifiers=(dataclasses.field, dataclasses.Field))
def lean_dataclass(cls: C | None = None, /, *, frozen: bool = False) -> C | Callable[[C], C]:
    """`@dataclass` (`frozen=True`: `@dataclass(frozen=True)`) for a class built rarely: the same dataclass
    (fields, defaults, `default_factory`, a field's `repr` and `compare`, `dataclasses.replace`), with the
    generic `__init__`, `__repr__`, `__eq__` and `__hash__` of this module instead of methods compiled for
    it. A class may still write its own `__init__` (the generic one binds its arguments in a loop: for
    classes built rarely, not per request; it takes no `InitVar`)."""

    def make(cls: C) -> C:
        own_init = "__init__" in cls.__dict__
        made: Any = dataclasses.dataclass(init=False, repr=False, eq=False)(cls)
        fields = dataclasses.fields(made)
        made._init_fields = tuple((f.name, f.default, f.default_factory) for f in fields if f.init)
        made._fields = tuple(f.name for f in fields if f.repr)  # what `__repr__` shows
        made._values = staticmethod(_getter(tuple(f.name for f in fields if f.compare)))  # `==` and hash
        if not own_init:
            made.__init__ = _lean_init
        made.__repr__, made.__eq__ = Struct.__repr__, Struct.__eq__
        if frozen:
            made.__hash__ = Value.__hash__
            made.__setattr__, made.__delattr__ = _frozen_setattr, _frozen_delattr
        else:
            made.__hash__ = None
        return made  # type: ignore[no-any-return]

    return make if cls is None else make(cls)


def _lean_init(self: Any, *args: Any, **kwargs: Any) -> None:
    """A dataclass's `__init__`, for any `lean_dataclass`: positional arguments in field order, then keywords;
    a missing one takes its default (or `default_factory()`)."""
    cls = type(self)
    spec: tuple[tuple[str, Any, Any], ...] = cls._init_fields
    if len(args) > len(spec):
        raise TypeError(f"{cls.__qualname__}() takes {len(spec)} positional arguments but {len(args)} were given")
    given = {spec[i][0]: value for i, value in enumerate(args)}
    for name, value in kwargs.items():
        if name in given:
            raise TypeError(f"{cls.__qualname__}() got multiple values for argument {name!r}")
        given[name] = value
    for name, default, factory in spec:
        if name in given:
            value = given.pop(name)
        elif factory is not dataclasses.MISSING:
            value = factory()
        elif default is not dataclasses.MISSING:
            value = default
        else:
            raise TypeError(f"{cls.__qualname__}() missing required argument: {name!r}")
        object.__setattr__(self, name, value)
    if given:
        raise TypeError(f"{cls.__qualname__}() got an unexpected keyword argument {next(iter(given))!r}")
    if hasattr(self, "__post_init__"):
        self.__post_init__()


def _frozen_setattr(self: Any, name: str, value: Any) -> None:
    raise _frozen(f"cannot assign to field {name!r}")


def _frozen_delattr(self: Any, name: str) -> None:
    raise _frozen(f"cannot delete field {name!r}")
