"""A tool's or a prompt's parameters on the command line: `key=value` pairs typed by the tool's input schema,
the `--arguments` JSON object, and the one-line signature `list` prints (`search(query: string, limit:
integer = 10)`).

A value is read as the schema's type: an integer, a number, a boolean (true/false, yes/no, on/off, 1/0),
`null`, an array or object written as JSON, and a string as given. A union (`"type": [...]`, `anyOf`,
`oneOf`) takes the first of those kinds, in that order, that the text is; a property without a type takes
JSON when the text is JSON, else the text. A key the tool does not take, or a value that is not of its
type, is a `RemoteFailure` naming the key and the tool's signature.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from .failures import RemoteFailure, one_line

_YES = {"true", "yes", "on", "1"}
_NO = {"false", "no", "off", "0"}
_ORDER = ("null", "boolean", "integer", "number", "array", "object", "string")
"""The kinds a union's value is tried as, most particular first: `7` is the integer before the string."""
_ARTICLES = {"integer": "an integer", "array": "a JSON array", "object": "a JSON object", "null": "null"}


def json_object(text: str) -> dict[str, Any]:
    """`--arguments`: a JSON object, or `@FILE` holding one."""
    if text.startswith("@"):
        try:
            text = Path(text[1:]).read_text()
        except OSError as exc:
            raise RemoteFailure(f"--arguments: cannot read {text[1:]}: {exc.strerror}") from None
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise RemoteFailure(f'--arguments is not JSON ({exc}); write e.g. \'{{"city": "Paris"}}\'') from None
    if not isinstance(value, dict):
        raise RemoteFailure('--arguments must be a JSON object, e.g. \'{"city": "Paris"}\'')
    return value


def pairs(given: list[str]) -> list[tuple[str, str]]:
    """`key=value` words as (key, value), split at the first `=`."""
    found: list[tuple[str, str]] = []
    for word in given:
        key, equals, value = word.partition("=")
        if not equals or not key:
            raise RemoteFailure(f"{word!r} is not key=value (e.g. city=Paris; --arguments takes a JSON object)")
        found.append((key, value))
    return found


# -- what list prints ---------------------------------------------------------------------------------------
def type_name(schema: Any) -> str:
    """A property's type in a few words: `integer`, `array[string] | null`, `"a" | "b"`, `any`."""
    if not isinstance(schema, dict):
        return "any"
    if "const" in schema:
        return json.dumps(schema["const"], ensure_ascii=False)
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        shown = [json.dumps(value, ensure_ascii=False) for value in schema["enum"][:6]]
        return " | ".join(shown + (["…"] if len(schema["enum"]) > 6 else []))
    for key in ("anyOf", "oneOf"):
        if isinstance(schema.get(key), list) and schema[key]:
            return " | ".join(dict.fromkeys(type_name(option) for option in schema[key]))
    if isinstance(schema.get("$ref"), str):
        return schema["$ref"].rsplit("/", 1)[-1] or "any"
    kind = schema.get("type")
    if isinstance(kind, list) and kind:
        return " | ".join(type_name({**schema, "type": each}) for each in kind)
    if kind == "array":
        items = schema.get("items")
        return f"array[{type_name(items)}]" if isinstance(items, dict) and items else "array"
    return kind if isinstance(kind, str) else "any"


def signature(name: str, schema: Any) -> str:
    """`name(param: type = default, optional?: type, ...)` from a tool's input schema."""
    schema = schema if isinstance(schema, dict) else {}
    properties = schema.get("properties") if isinstance(schema.get("properties"), dict) else {}
    required = set(schema.get("required") or [])
    shown: list[str] = []
    for key, prop in properties.items():
        text = f"{key}{'' if key in required or 'default' in (prop or {}) else '?'}: {type_name(prop)}"
        if isinstance(prop, dict) and "default" in prop:
            text += " = " + one_line(json.dumps(prop["default"], ensure_ascii=False), 40)
        shown.append(text)
    return f"{name}({', '.join(shown)})"


# -- key=value, typed ---------------------------------------------------------------------------------------
def typed(tool: str, schema: Any, given: list[tuple[str, str]]) -> dict[str, Any]:
    """The arguments `given` (key, text) typed by the tool's input schema."""
    schema = schema if isinstance(schema, dict) else {}
    properties = schema.get("properties") if isinstance(schema.get("properties"), dict) else {}
    extra = schema.get("additionalProperties")
    arguments: dict[str, Any] = {}
    for key, text in given:
        if key in properties:
            prop = properties[key]
        elif extra is True or isinstance(extra, dict):
            prop = extra if isinstance(extra, dict) else {}
        else:
            raise RemoteFailure(f"{tool} takes no argument {key!r}: {signature(tool, schema)}")
        try:
            arguments[key] = value_for(text, prop if isinstance(prop, dict) else {})
        except ValueError as exc:
            raise RemoteFailure(f"{key}={text!r}: {exc}: {signature(tool, schema)}") from None
    return arguments


def value_for(text: str, schema: dict[str, Any]) -> Any:
    """`text` as a value of `schema`'s type; ValueError says what the schema wants."""
    if isinstance(schema.get("enum"), list) or "const" in schema:
        allowed = schema["enum"] if isinstance(schema.get("enum"), list) else [schema["const"]]
        for value in allowed:
            if text == (value if isinstance(value, str) else json.dumps(value)):
                return value
        raise ValueError("expected one of " + ", ".join(json.dumps(value, ensure_ascii=False) for value in allowed))
    kinds = _kinds(schema)
    if not kinds:
        try:
            return json.loads(text)
        except ValueError:
            return text
    for kind in sorted(kinds, key=_ORDER.index):
        try:
            return _as(kind, text)
        except ValueError:
            continue
    wanted = [_ARTICLES.get(kind, f"a {kind}") for kind in sorted(kinds, key=lambda k: (k == "null", _ORDER.index(k)))]
    raise ValueError("expected " + " or ".join(wanted))


def _kinds(schema: dict[str, Any]) -> set[str]:
    """The JSON types a schema allows (empty: any); unknown names are left out."""
    kind = schema.get("type")
    found = {kind} if isinstance(kind, str) else set(kind) if isinstance(kind, list) else set()
    for key in ("anyOf", "oneOf"):
        for option in schema.get(key) or []:
            if isinstance(option, dict):
                inner = _kinds(option)
                if not inner and ("const" in option or "enum" in option):
                    inner = {"string"}  # a choice among values: the server checks which
                if not inner:
                    return set()  # one option takes anything
                found |= inner
    return found & set(_ORDER)


def _as(kind: str, text: str) -> Any:
    if kind == "string":
        return text
    if kind == "null":
        if text == "null":
            return None
        raise ValueError(kind)
    if kind == "boolean":
        if text.lower() in _YES | _NO:
            return text.lower() in _YES
        raise ValueError(kind)
    if "_" in text:  # Python reads 1_000; JSON has no such number
        raise ValueError(kind)
    if kind == "integer":
        return int(text.strip(), 10)
    if kind == "number":
        number = float(text)
        if not math.isfinite(number):
            raise ValueError(kind)
        return int(number) if number.is_integer() and text.strip().lstrip("+-").isdigit() else number
    value = json.loads(text)
    if not isinstance(value, list if kind == "array" else dict):
        raise ValueError(kind)
    return value
