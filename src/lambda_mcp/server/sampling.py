"""Typed sampling: the `sampling/createMessage` params a handler's options make, and the client's answer
as a `Sampled` (`.text` whatever the content's shape, `.model`, `.stop_reason`, the raw content).

A result's `content` is one block on every revision before 2025-11-25 and a block or a list of blocks
since; `.text` joins the text blocks either way, and `.tool_uses` lists the `tool_use` blocks of a
tool-enabled request (2025-11-25 and later, with the client's `sampling.tools` capability).
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

_ATTRIBUTES = {
    "content": "result.content (the block or blocks, as sent) or result.text (their text)",
    "role": "result.role",
    "model": "result.model",
    "stopReason": "result.stop_reason",
}
"""What to write instead of `result["<key>"]`, the dict `ctx.sample` returned before `Sampled`."""


@dataclass(frozen=True)
class Sampled:
    """The client model's answer to `ctx.sample(...)`."""

    role: str
    content: dict[str, Any] | list[dict[str, Any]]
    """As sent: one content block, or (2025-11-25 and later) a list of them."""
    model: str | None = None
    stop_reason: str | None = None
    raw: dict[str, Any] = field(default_factory=dict)
    """The whole `CreateMessageResult`."""

    @property
    def blocks(self) -> list[dict[str, Any]]:
        return list(self.content) if isinstance(self.content, list) else [self.content]

    @property
    def text(self) -> str:
        """The text blocks' text, joined ("" when the model answered with no text)."""
        return "".join(str(block.get("text", "")) for block in self.blocks if block.get("type") == "text")

    @property
    def tool_uses(self) -> list[dict[str, Any]]:
        """The `tool_use` blocks (`{id, name, input}`) of a tool-enabled request."""
        return [block for block in self.blocks if block.get("type") == "tool_use"]

    def get(self, key: str, default: Any = None) -> Any:
        """Deprecated: `ctx.sample` returned the result dict before `Sampled`; read the attributes instead."""
        _warn_dict_style(f"result.get({key!r})", _ATTRIBUTES.get(key, f"result.raw.get({key!r})"))
        return self.raw.get(key, default)

    def __getitem__(self, key: str) -> Any:
        """Deprecated, as `get`."""
        _warn_dict_style(f"result[{key!r}]", _ATTRIBUTES.get(key, f"result.raw[{key!r}]"))
        return self.raw[key]

    def __contains__(self, key: object) -> bool:
        """Deprecated, as `get`."""
        _warn_dict_style(f"{key!r} in result", f"{key!r} in result.raw")
        return key in self.raw

    @classmethod
    def of(cls, raw: dict[str, Any]) -> Sampled:
        content = raw.get("content")
        if isinstance(content, list):
            blocks: dict[str, Any] | list[dict[str, Any]] = [b for b in content if isinstance(b, dict)]
        else:
            blocks = content if isinstance(content, dict) else {}
        model, stop = raw.get("model"), raw.get("stopReason")
        return cls(
            role=str(raw.get("role", "assistant")),
            content=blocks,
            model=model if isinstance(model, str) else None,
            stop_reason=stop if isinstance(stop, str) else None,
            raw=raw,
        )


def _warn_dict_style(written: str, instead: str) -> None:
    warnings.warn(
        f"ctx.sample() returns a Sampled, not a dict: instead of {written} write {instead}"
        " (.raw is the whole result dict; dict-style access works until 0.3)",
        DeprecationWarning,
        stacklevel=3,
    )


def sampling_params(
    messages: str | Sequence[dict[str, Any]],
    *,
    max_tokens: int,
    system_prompt: str | None = None,
    temperature: float | None = None,
    model_preferences: dict[str, Any] | Sequence[str] | None = None,
    stop_sequences: Sequence[str] | None = None,
    tools: Sequence[dict[str, Any]] | None = None,
    tool_choice: str | dict[str, Any] | None = None,
    options: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """`sampling/createMessage` params. `messages` may be one user text; `model_preferences` may be a list
    of model name hints (`["claude-sonnet", "gpt"]`); `tool_choice` may be a mode (`"auto"`)."""
    if isinstance(messages, str):
        messages = [{"role": "user", "content": {"type": "text", "text": messages}}]
    params: dict[str, Any] = {"messages": list(messages), "maxTokens": max_tokens}
    if system_prompt is not None:
        params["systemPrompt"] = system_prompt
    if temperature is not None:
        params["temperature"] = temperature
    if model_preferences is not None:
        if isinstance(model_preferences, dict):
            params["modelPreferences"] = dict(model_preferences)
        else:
            params["modelPreferences"] = {"hints": [{"name": name} for name in model_preferences]}
    if stop_sequences is not None:
        params["stopSequences"] = list(stop_sequences)
    if tools is not None:
        params["tools"] = list(tools)
    if tool_choice is not None:
        params["toolChoice"] = {"mode": tool_choice} if isinstance(tool_choice, str) else dict(tool_choice)
    return {**params, **(options or {})}
