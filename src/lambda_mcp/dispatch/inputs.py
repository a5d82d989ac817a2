"""Input channels: how `Context.ask` is answered in each era and transport.

- modern: answers come from `inputResponses` plus those sealed in `requestState`; a missing one
  suspends the call (`InputRequired`), which dispatch turns into an `InputRequiredResult`;
- legacy on a streaming transport: each request goes out on the call's SSE stream and the call
  waits for the client's response POST;
- legacy on a buffered transport: an answer recorded by an earlier run, or the request goes out
  in the response and the call suspends (`CallSuspended`) until the client answers and resumes
  (`rounds.BufferedRound`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..protocol import jsonrpc, revisions
from ..protocol.errors import MISSING_CLIENT_CAPABILITY, MCPError
from ..server.context import ClientError
from ..server.errors import ToolError
from ..server.suspensions import InputRequired
from .context import Ask, Send
from .rounds import BufferedRound

_CAPABILITY = {"elicitation/create": "elicitation", "sampling/createMessage": "sampling", "roots/list": "roots"}


def required_capability(request: dict[str, Any], capabilities: dict[str, Any]) -> dict[str, Any] | None:
    """The client capability an input request needs and the client lacks, as a ClientCapabilities object."""
    method = request.get("method")
    name = _CAPABILITY.get(method) if isinstance(method, str) else None
    if name is None:
        raise ValueError(f"unsupported input request method {method!r}")
    declared = capabilities.get(name)
    if not isinstance(declared, dict):
        if name == "elicitation" and request.get("params", {}).get("mode") == "url":
            return {"elicitation": {"url": {}}}
        return {name: {}}
    if name == "elicitation":
        mode = request.get("params", {}).get("mode", "form")
        # `elicitation: {}` means form only
        if mode == "url" and "url" not in declared:
            return {"elicitation": {"url": {}}}
        if mode == "form" and declared and "form" not in declared:
            return {"elicitation": {"form": {}}}
    if name == "sampling" and "tools" in request.get("params", {}) and "tools" not in declared:
        return {"sampling": {"tools": {}}}
    return None


class ModernInput:
    """Answers recorded so far; `answers` grows as rounds complete and is sealed into `requestState`."""

    def __init__(self, answers: dict[str, Any], capabilities: dict[str, Any]) -> None:
        self.answers = answers
        self._capabilities = capabilities

    async def ask(self, requests: Mapping[str, dict[str, Any]]) -> dict[str, Any]:
        missing = {key: dict(req) for key, req in requests.items() if key not in self.answers}
        if missing:
            for request in missing.values():
                needed = required_capability(request, self._capabilities)
                if needed is not None:
                    raise MCPError(
                        MISSING_CLIENT_CAPABILITY,
                        f"This request needs the client capability {next(iter(needed))!r}",
                        {"requiredCapabilities": needed},
                    )
            raise InputRequired(missing)
        return {key: _answer_of(self.answers[key], requests[key]) for key in requests}


_PRIMITIVE_TYPES = ("string", "number", "integer", "boolean")


def revision_gap(request: dict[str, Any], version: str) -> str | None:
    """Why a legacy session's protocol revision cannot carry this input request, if it cannot: elicitation
    exists from 2025-06-18, URL mode, sampling with tools and multi-select (array) fields from 2025-11-25."""
    method, params = request.get("method"), request.get("params") or {}
    if method == "elicitation/create":
        if not revisions.has_elicitation(version):
            return f"elicitation does not exist in protocol revision {version}"
        if not revisions.has_url_elicitation(version) and params.get("mode") == "url":
            return f"URL-mode elicitation does not exist in protocol revision {version}"
        properties = (params.get("requestedSchema") or {}).get("properties") or {}
        if not revisions.has_multi_select(version) and any(
            not isinstance(p, dict) or p.get("type") not in _PRIMITIVE_TYPES for p in properties.values()
        ):
            return f"protocol revision {version} elicits only string, number, integer and boolean fields"
    if method == "sampling/createMessage" and not revisions.has_sampling_tools(version) and "tools" in params:
        return f"sampling with tools does not exist in protocol revision {version}"
    return None


def _require_declared(request: dict[str, Any], capabilities: dict[str, Any], version: str) -> None:
    """Legacy: a request the client did not declare a capability for, or its revision cannot carry, is never
    sent; the handler gets an error."""
    gap = revision_gap(request, version)
    if gap is not None:
        raise ToolError(f"the client cannot be asked this: {gap}")
    needed = required_capability(request, capabilities)
    if needed is not None:
        ((name, part),) = needed.items()  # `sampling.tools`, `elicitation.url`: the part the request needs
        raise ToolError(f"the client did not declare the {'.'.join([name, *part][:2])!r} capability")


class LegacyStreamingInput:
    """Sends each request to the client on the call's stream and waits for its response POST."""

    def __init__(self, capabilities: dict[str, Any], version: str, server_request: Ask) -> None:
        self._capabilities = capabilities
        self._version = version
        self._server_request = server_request

    async def ask(self, requests: Mapping[str, dict[str, Any]]) -> dict[str, Any]:
        answers: dict[str, Any] = {}
        for key, request in requests.items():
            _require_declared(request, self._capabilities, self._version)
            try:
                answers[key] = await self._server_request(request["method"], dict(request.get("params") or {}))
            except ClientError as refusal:
                refusal.method = refusal.method or request["method"]
                raise
        return answers


class LegacyBufferedInput:
    """Answers recorded by earlier runs of the call; otherwise the requests go out and the call suspends."""

    def __init__(self, round_: BufferedRound, capabilities: dict[str, Any], version: str, send: Send) -> None:
        self._round = round_
        self._capabilities = capabilities
        self._version = version
        self._send = send

    async def ask(self, requests: Mapping[str, dict[str, Any]]) -> dict[str, Any]:
        for request in requests.values():
            _require_declared(request, self._capabilities, self._version)
        # Every request is sent on every run, answered or not, so each run numbers its messages the
        # same way: the run's outbox drops those an earlier response already carried.
        for key, request in requests.items():
            params = dict(request.get("params") or {})
            await self._send(jsonrpc.request(self._round.request_id(key), request["method"], params))
        answers = {key: self._round.answer(key) for key in requests}
        missing = tuple(key for key, answer in answers.items() if answer is None)
        if missing:
            raise self._round.suspend(missing)
        return {key: _result_of(answer, requests[key]) for key, answer in answers.items() if answer is not None}


class NoInput:
    """Where client input cannot be delivered (a buffered legacy call whose client accepts only JSON)."""

    async def ask(self, requests: Mapping[str, dict[str, Any]]) -> dict[str, Any]:
        raise ToolError(
            "client input (elicitation, sampling, roots) over a legacy session needs a client that accepts"
            " text/event-stream on this transport"
        )


def _answer_of(answer: dict[str, Any], request: Mapping[str, Any]) -> dict[str, Any]:
    """A recorded task answer; `{"error": ...}` is a legacy client's error response (stored by `tasks/result`)."""
    if set(answer) == {"error"}:
        return _result_of(answer, request)
    return answer


def _result_of(response: dict[str, Any], request: Mapping[str, Any]) -> dict[str, Any]:
    """The result of the client's JSON-RPC response to `request`; its error raises `ClientError` in the
    handler."""
    if "error" in response:
        error = response["error"] if isinstance(response["error"], dict) else {}
        method = request.get("method")
        raise ClientError(
            int(error.get("code", 0)),
            str(error.get("message", "client error")),
            method if isinstance(method, str) else None,
        )
    result = response.get("result")
    return result if isinstance(result, dict) else {}
