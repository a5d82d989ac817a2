"""What the test client answers when the server asks (elicitation, sampling, roots, ping), what it does
with progress, and what it says when a call failed for want of a handler.

Handlers are plain functions, sync or async: `elicitation_handler(message, schema)`,
`sampling_handler(messages, params)`, and a call's `progress_handler(progress, total, message)` (the
official SDK's shape).
"""

from __future__ import annotations

import inspect
import json
import re
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import replace
from typing import Any

from ..protocol.errors import MISSING_CLIENT_CAPABILITY
from .results import RequestFailed, ToolResult

ElicitationHandler = Callable[[str, dict[str, Any]], Awaitable[dict[str, Any]] | dict[str, Any]]
SamplingHandler = Callable[
    [list[dict[str, Any]], dict[str, Any]], Awaitable[str | dict[str, Any]] | str | dict[str, Any]
]
ProgressHandler = Callable[[float, float | None, str | None], Awaitable[None] | None]

_ARGUMENT = {
    "elicitation": "elicitation_handler=...",
    "sampling": "sampling_handler=...",
    "roots": "roots=[...]",
}
_METHOD_CAPABILITY = {"elicitation/create": "elicitation", "sampling/createMessage": "sampling", "roots/list": "roots"}
_UNDECLARED = re.compile(r"^the client did not declare the '(?P<name>\w+)(?:\.(?P<part>\w+))?' capability$")


class Answers:
    """The client's side of what the server asks: its handlers, and the progress handlers of the calls
    under way (by progress token)."""

    def __init__(
        self,
        elicit: ElicitationHandler | None,
        sample: SamplingHandler | None,
        roots: Sequence[str | dict[str, Any]] | None,
    ) -> None:
        self.on_elicit = elicit
        self.on_sample = sample
        self.roots = [{"uri": r} if isinstance(r, str) else dict(r) for r in roots] if roots is not None else None
        self.progress: dict[str | int, ProgressHandler] = {}

    async def answer(self, request: dict[str, Any]) -> dict[str, Any]:
        """The result for one request the server sent; an exception when there is no handler for it."""
        method, params = request.get("method"), request.get("params") or {}
        if method == "elicitation/create" and self.on_elicit is not None:
            answer = await _call(self.on_elicit, params.get("message", ""), params.get("requestedSchema") or {})
            return answer if "action" in answer else {"action": "accept", "content": answer}
        if method == "sampling/createMessage" and self.on_sample is not None:
            sampled = await _call(self.on_sample, params.get("messages", []), params)
            if isinstance(sampled, str):
                sampled = {"role": "assistant", "content": {"type": "text", "text": sampled}}
            return {"role": "assistant", "model": "test-model", "stopReason": "endTurn", **sampled}
        if method == "roots/list" and self.roots is not None:
            return {"roots": self.roots}
        if method == "ping":
            return {}
        capability = _METHOD_CAPABILITY.get(method) if isinstance(method, str) else None
        give = f": give the test client one, Client(app, {_ARGUMENT[capability]})" if capability else ""
        raise RuntimeError(f"the test client has no handler for {method}{give}")

    async def notified(self, message: dict[str, Any]) -> None:
        """A notification: progress for a call under way goes to that call's handler."""
        params = message.get("params") or {}
        if message.get("method") != "notifications/progress" or not isinstance(params, dict):
            return
        token = params.get("progressToken")
        handler = self.progress.get(token) if isinstance(token, str | int) else None
        if handler is not None:
            await _call(handler, params.get("progress"), params.get("total"), params.get("message"))


def missing_handler(failed: RequestFailed, declared: dict[str, Any]) -> RequestFailed | None:
    """A -32021 error (a 2026 call that asked for a capability the client did not declare) saying what to
    pass the test client, or None for any other error."""
    required = failed.data.get("requiredCapabilities") if isinstance(failed.data, dict) else None
    if failed.code != MISSING_CLIENT_CAPABILITY or not isinstance(required, dict) or len(required) != 1:
        return None
    ((name, part),) = required.items()
    give = _what_to_pass(name, part if isinstance(part, dict) else {}, declared)
    if give is None:
        return None
    message = f"{failed.message} (the test client declares it when given: {give})"
    return RequestFailed({"code": failed.code, "message": message, "data": failed.data}, status=failed.status)


def hinted(result: ToolResult, declared: dict[str, Any]) -> ToolResult:
    """A legacy call's error result for a capability the client did not declare, with what to pass."""
    found = _UNDECLARED.match(result.text) if result.is_error and len(result.content) == 1 else None
    give = _what_to_pass(found["name"], {found["part"]: {}} if found["part"] else {}, declared) if found else None
    if give is None:
        return result
    text = f"{result.text} (the test client declares it when given: {give})"
    return replace(result, content=[{**result.content[0], "text": text}])


def _what_to_pass(name: str, part: dict[str, Any], declared: dict[str, Any]) -> str | None:
    """`Client(app, ...)` with what declares capability `name` (and its `part`: sampling with tools,
    URL-mode elicitation), given what the client declared."""
    if name not in _ARGUMENT:
        return None
    given = [] if name in declared else [_ARGUMENT[name]]
    if part:
        held = declared.get(name)
        base: dict[str, Any] = held if isinstance(held, dict) else {}
        if name == "elicitation" and not base:
            base = {"form": {}}  # keep form mode: a capability given replaces the one the handler declares
        given.append(f"capabilities={json.dumps({name: {**base, **part}})}")
    return f"Client(app, {', '.join(given)})" if given else None


async def _call(handler: Callable[..., Any], *args: Any) -> Any:
    value = handler(*args)
    return await value if inspect.isawaitable(value) else value
