"""An OpenAPI schema as a plain JSON Schema (2020-12) for one tool's input or output: local `$ref`s inlined,
a recursive one kept once under `$defs` (`#/$defs/Name`), and the OpenAPI dialect converted: `nullable`
(a `"null"` type), boolean `exclusiveMinimum`/`exclusiveMaximum` (the bound itself), `example` (to
`examples`); `discriminator`, `xml`, `externalDocs` and `x-` extensions dropped; `readOnly` properties
left out of an input, `writeOnly` ones out of an output."""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping
from typing import Any, Literal

from .refs import pointer

ONE = frozenset(
    {"not", "if", "then", "else", "contains", "propertyNames", "additionalProperties", "additionalItems"}
    | {"unevaluatedItems", "unevaluatedProperties", "contentSchema", "items"}
)
"""Keywords whose value is a schema (`items` may be a list in old documents)."""
MANY = frozenset({"allOf", "anyOf", "oneOf", "prefixItems"})
"""Keywords whose value is a list of schemas."""
NAMED = frozenset({"properties", "patternProperties", "$defs", "definitions", "dependentSchemas"})
"""Keywords whose value maps names to schemas."""
DROPPED = frozenset({"discriminator", "xml", "externalDocs", "nullable", "example"})
"""OpenAPI's own keywords (the last two converted on the way)."""
ANNOTATIONS = frozenset({"description", "title", "summary", "examples", "default", "deprecated"})
"""What a 3.1 `$ref`'s siblings may say over its target without changing what it accepts."""
_DEF_NAME = re.compile(r"[^A-Za-z0-9._-]+")


class _Recursion(Exception):
    """A `$ref` met again while it is being inlined: it becomes a `$defs` entry and the conversion restarts."""

    def __init__(self, ref: str) -> None:
        self.ref = ref


class Schemas:
    """Converts the schemas of one side of one tool (its input, or its output) into JSON Schema; the
    recursive ones they reach are gathered by `definitions()` for the root's `$defs`."""

    def __init__(self, document: Mapping[str, Any], *, legacy: bool, side: Literal["input", "output"]) -> None:
        self.document = document
        self.legacy = legacy
        """OpenAPI 3.0: a `$ref`'s siblings are ignored (3.1: they apply too)."""
        self.hidden = "readOnly" if side == "input" else "writeOnly"
        self.recursive: set[str] = set()
        self._names: dict[str, str] = {}
        self._defs: dict[str, Any] = {}

    def convert(self, node: Any) -> Any:
        """`node` as JSON Schema; `refs.Unsupported` for a `$ref` it cannot follow."""
        while True:
            try:
                return self._schema(node, (), top=True)
            except _Recursion as found:
                self.recursive.add(found.ref)

    def definitions(self) -> dict[str, Any]:
        """`$defs` for the root: every recursive schema the conversions so far refer to."""
        while pending := [ref for ref in self._names if self._names[ref] not in self._defs]:
            for ref in pending:
                while True:
                    try:
                        self._defs[self._names[ref]] = self._schema(pointer(self.document, ref), (ref,))
                        break
                    except _Recursion as found:
                        self.recursive.add(found.ref)
        return dict(self._defs)

    # -- the walk ---------------------------------------------------------------------------------
    def _schema(self, node: Any, stack: tuple[str, ...], top: bool = False) -> Any:
        if not isinstance(node, Mapping):
            return node if isinstance(node, bool) else {}
        ref = node.get("$ref")
        if isinstance(ref, str):
            return self._reference(node, ref, stack, top)
        return self._keywords(node, stack)

    def _reference(self, node: Mapping[str, Any], ref: str, stack: tuple[str, ...], top: bool) -> Any:
        siblings = {} if self.legacy else self._keywords({k: v for k, v in node.items() if k != "$ref"}, stack)
        if ref in self.recursive and not (top and ref not in stack):
            return {"$ref": f"#/$defs/{self._name(ref)}", **siblings}
        if ref in stack:
            raise _Recursion(ref)
        target = self._schema(pointer(self.document, ref), (*stack, ref))
        if not siblings:
            return target
        if isinstance(target, dict) and set(siblings) <= ANNOTATIONS:
            return {**target, **siblings}
        return {**siblings, "allOf": [target]}

    def _keywords(self, node: Mapping[str, Any], stack: tuple[str, ...]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, value in node.items():
            if key in DROPPED or key.startswith("x-"):
                continue
            if key in ONE:
                many = key == "items" and isinstance(value, list)
                out[key] = [self._schema(v, stack) for v in value] if many else self._schema(value, stack)
            elif key in MANY and isinstance(value, list):
                out[key] = [self._schema(item, stack) for item in value]
            elif key in NAMED and isinstance(value, Mapping):
                out[key] = {name: self._schema(item, stack) for name, item in value.items()}
            else:
                out[key] = copy.deepcopy(value)
        if "example" in node and node["example"] not in out.get("examples", []):
            examples = out.get("examples")
            out["examples"] = [*(examples if isinstance(examples, list) else []), copy.deepcopy(node["example"])]
        self._hide(out)
        for bound, exclusive in (("minimum", "exclusiveMinimum"), ("maximum", "exclusiveMaximum")):
            if isinstance(out.get(exclusive), bool) and out.pop(exclusive) and bound in out:  # 3.0: a flag
                out[exclusive] = out.pop(bound)
        if node.get("nullable") is True:
            return _nullable(out)
        return out

    def _hide(self, out: dict[str, Any]) -> None:
        """Leave out the properties this side never carries (`readOnly` in an input, `writeOnly` in an output)."""
        properties = out.get("properties")
        if not isinstance(properties, dict):
            return
        hidden = {name for name, s in properties.items() if isinstance(s, dict) and s.get(self.hidden) is True}
        if hidden:
            out["properties"] = {name: s for name, s in properties.items() if name not in hidden}
            if isinstance(out.get("required"), list):
                out["required"] = [name for name in out["required"] if name not in hidden]
                if not out["required"]:
                    del out["required"]

    def _name(self, ref: str) -> str:
        """The `$defs` name of `ref`: its last pointer token, made unique."""
        if ref not in self._names:
            base = _DEF_NAME.sub("_", ref.rsplit("/", 1)[-1]) or "schema"
            taken = set(self._names.values())
            name, n = base, 1
            while name in taken:
                n += 1
                name = f"{base}_{n}"
            self._names[ref] = name
        return self._names[ref]


def _nullable(out: dict[str, Any]) -> dict[str, Any]:
    """3.0 `nullable: true`: null is accepted too (a typeless schema: as another branch)."""
    kind = out.get("type")
    if isinstance(kind, (str, list)):
        kinds = [kind] if isinstance(kind, str) else list(kind)
        out["type"] = kinds if "null" in kinds else [*kinds, "null"]
        if isinstance(out.get("enum"), list) and None not in out["enum"]:
            out["enum"] = [*out["enum"], None]
        return out
    return {"anyOf": [out, {"type": "null"}]} if out else out


def is_object(schema: Any) -> bool:
    """Whether `schema` plainly describes an object with named properties (nothing composed or referred to)."""
    if not isinstance(schema, dict) or not isinstance(schema.get("properties"), dict):
        return False
    if any(key in schema for key in ("$ref", "allOf", "anyOf", "oneOf", "not", "if")):
        return False
    return bool(schema.get("type", "object") == "object")
