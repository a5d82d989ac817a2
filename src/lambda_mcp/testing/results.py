"""What the test client returns: `ToolResult` for a tool call, `RequestFailed` for a JSON-RPC error."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


class RequestFailed(Exception):
    """The server answered a JSON-RPC error (`code`, `message`, `data`), with the response's HTTP `status`
    (403: the client lacks a scope the operation needs)."""

    def __init__(self, error: dict[str, Any], *, status: int | None = None) -> None:
        super().__init__(f"{error.get('code')}: {error.get('message')}")
        self.code = error.get("code")
        self.message = str(error.get("message", ""))
        self.data = error.get("data")
        self.status = status


@dataclass(frozen=True)
class ToolResult:
    """A `CallToolResult`: `content` blocks, `structured_content`, `is_error`; `text` joins the text blocks."""

    content: list[dict[str, Any]]
    structured_content: dict[str, Any] | None = None
    is_error: bool = False
    raw: dict[str, Any] = field(default_factory=dict)

    @property
    def text(self) -> str:
        return "\n".join(block["text"] for block in self.content if block.get("type") == "text")

    @classmethod
    def of(cls, raw: dict[str, Any]) -> ToolResult:
        return cls(raw.get("content", []), raw.get("structuredContent"), raw.get("isError") is True, raw)
