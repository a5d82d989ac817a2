"""Answers to what a server asks the client mid-call (an elicitation, roots, a ping), in either era:
the result to send back, or `Unanswerable` with the JSON-RPC error to send instead.

Sampling is refused: there is no model behind a command line.
"""

from __future__ import annotations

from typing import Any

from .prompt import Prompter

METHOD_NOT_FOUND = -32601


class Unanswerable(Exception):
    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message

    def to_error(self) -> dict[str, Any]:
        return {"code": self.code, "message": self.message}


class Answerer:
    def __init__(self, prompter: Prompter) -> None:
        self.prompter = prompter

    def answer(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """The result for a server request `method` with `params`."""
        if method == "elicitation/create":
            message = str(params.get("message") or "")
            if params.get("mode") == "url":
                return self.prompter.url(message, str(params.get("url") or ""))
            schema = params.get("requestedSchema")
            return self.prompter.form(message, schema if isinstance(schema, dict) else {})
        if method == "roots/list":
            return {"roots": []}
        if method == "ping":
            return {}
        if method == "sampling/createMessage":
            raise Unanswerable(METHOD_NOT_FOUND, "sampling is not supported: lambda-mcp call has no model to ask")
        raise Unanswerable(METHOD_NOT_FOUND, f"Method not found: {method}")
