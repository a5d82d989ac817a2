"""Elicitation on the terminal: a form's fields asked one by one and coerced to the schema's types,
or a URL to visit, each answered accept, decline or cancel.

Prompts go to stderr (stdout holds only the result). Answers are read a line at a time from stdin,
whether it is a terminal or a pipe, so a script (or a test) can answer; the end of input cancels.
"""

from __future__ import annotations

import json
from typing import Any, TextIO

_YES = {"y", "yes", "true", "t", "1", "on"}
_NO = {"n", "no", "false", "f", "0", "off"}
_ACTIONS = {"": "accept", "a": "accept", "accept": "accept", "y": "accept", "yes": "accept"}
_ACTIONS |= {"d": "decline", "decline": "decline", "n": "decline", "no": "decline", "c": "cancel", "cancel": "cancel"}


class _EndOfInput(Exception):
    """stdin ended: the elicitation is cancelled."""


class Prompter:
    def __init__(self, stdin: TextIO, stderr: TextIO) -> None:
        self.stdin = stdin
        self.stderr = stderr
        self.echo = not stdin.isatty()
        """Echo piped answers, so a transcript reads like a session."""

    def form(self, message: str, schema: dict[str, Any]) -> dict[str, Any]:
        """Ask `message` and each property of `schema`; the ElicitResult."""
        self._say(f"\nThe server asks: {message}")
        try:
            action = self._action("Answer it? [A]ccept / [d]ecline / [c]ancel: ")
            if action != "accept":
                return {"action": action}
            properties = schema.get("properties") or {}
            required = set(schema.get("required") or [])
            content: dict[str, Any] = {}
            for name, field in properties.items():
                value = self._field(name, field if isinstance(field, dict) else {}, name in required)
                if value is not None:
                    content[name] = value
        except _EndOfInput:
            self._say("(end of input: cancelled)")
            return {"action": "cancel"}
        return {"action": "accept", "content": content}

    def url(self, message: str, url: str) -> dict[str, Any]:
        """Show a URL-mode elicitation; accept means the user agrees to go there (and went)."""
        self._say(f"\nThe server asks: {message}\nOpen this URL in a browser: {url}")
        try:
            return {"action": self._action("Done (or will do)? [A]ccept / [d]ecline / [c]ancel: ")}
        except _EndOfInput:
            self._say("(end of input: cancelled)")
            return {"action": "cancel"}

    # -- asking -------------------------------------------------------------------------------------
    def _say(self, text: str) -> None:
        print(text, file=self.stderr, flush=True)

    def _ask(self, prompt: str) -> str:
        self.stderr.write(prompt)
        self.stderr.flush()
        line = self.stdin.readline()
        if not line:
            self.stderr.write("\n")
            raise _EndOfInput
        answer = line.rstrip("\r\n")
        if self.echo:
            self.stderr.write(answer + "\n")
        return answer.strip()

    def _action(self, prompt: str) -> str:
        while True:
            action = _ACTIONS.get(self._ask(prompt).lower())
            if action is not None:
                return action
            self._say("  please answer a (accept), d (decline) or c (cancel)")

    def _field(self, name: str, field: dict[str, Any], required: bool) -> Any:
        label = str(field.get("title") or name)
        description = field.get("description")
        choices = _choices(field)
        kind = str(field.get("type") or "string")
        hints = [kind if not choices else "one of " + ", ".join(f"{i}) {t}" for i, (_, t) in enumerate(choices, 1))]
        if kind == "array":
            options = _choices(field.get("items") or {})
            hints = ["comma-separated: " + ", ".join(f"{i}) {t}" for i, (_, t) in enumerate(options, 1))]
        if "default" in field:
            hints.append(f"default {json.dumps(field['default'])}")
        if not required:
            hints.append("optional")
        prompt = (
            f"  {label}{f' ({description})' if description and description != label else ''} [{'; '.join(hints)}]: "
        )
        while True:
            text = self._ask(prompt)
            if text == "":
                if "default" in field:
                    return field["default"]
                if not required:
                    return None
                self._say("  an answer is required")
                continue
            try:
                return check(coerce(text, field), field)
            except ValueError as exc:
                self._say(f"  {exc}")


def _choices(field: dict[str, Any]) -> list[tuple[str, str]]:
    """(value, title) pairs of an enum field: `enum`, `oneOf`/`anyOf` of consts, legacy `enumNames`."""
    if isinstance(field.get("enum"), list):
        names: list[Any] = field["enumNames"] if isinstance(field.get("enumNames"), list) else field["enum"]
        return [(str(value), str(title)) for value, title in zip(field["enum"], names, strict=False)]
    for key in ("oneOf", "anyOf"):
        options = field.get(key)
        if isinstance(options, list):
            return [(str(o["const"]), str(o.get("title", o["const"]))) for o in options if isinstance(o, dict)]
    return []


def _pick(text: str, choices: list[tuple[str, str]]) -> str:
    if text.isdigit() and 1 <= int(text) <= len(choices):
        return choices[int(text) - 1][0]
    for value, title in choices:
        if text in (value, title) or text.lower() in (value.lower(), title.lower()):
            return value
    raise ValueError("choose one of: " + ", ".join(title for _, title in choices))


def coerce(text: str, field: dict[str, Any]) -> Any:
    """`text` as the value `field` (a primitive elicitation schema) asks for; ValueError says why not."""
    kind = field.get("type", "string")
    choices = _choices(field)
    if kind == "array":
        options = _choices(field.get("items") or {})
        parts = [part.strip() for part in text.split(",") if part.strip()]
        return [_pick(part, options) for part in parts] if options else parts
    if choices:
        return _pick(text, choices)
    if kind == "boolean":
        if text.lower() in _YES:
            return True
        if text.lower() in _NO:
            return False
        raise ValueError("answer yes or no")
    if kind == "integer":
        try:
            return int(text)
        except ValueError:
            raise ValueError("a whole number, please") from None
    if kind == "number":
        try:
            number = float(text)
        except ValueError:
            raise ValueError("a number, please") from None
        return int(number) if number.is_integer() and "." not in text else number
    return text


def check(value: Any, field: dict[str, Any]) -> Any:
    """`value` if it keeps to the field's bounds (`minimum`, `maxLength`, `minItems`, ...), else ValueError."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        if isinstance(field.get("minimum"), (int, float)) and value < field["minimum"]:
            raise ValueError(f"at least {field['minimum']}, please")
        if isinstance(field.get("maximum"), (int, float)) and value > field["maximum"]:
            raise ValueError(f"at most {field['maximum']}, please")
    bounds = ("minLength", "maxLength") if isinstance(value, str) else ("minItems", "maxItems")
    if isinstance(value, (str, list)):
        low, high = field.get(bounds[0]), field.get(bounds[1])
        if isinstance(low, int) and len(value) < low:
            raise ValueError(f"at least {low} {'characters' if isinstance(value, str) else 'choices'}, please")
        if isinstance(high, int) and len(value) > high:
            raise ValueError(f"at most {high} {'characters' if isinstance(value, str) else 'choices'}, please")
    return value
