"""What the CLI prints: a tool result as text (text blocks as they are, other blocks one line each,
`structuredContent` as JSON when there is no text), a resource's contents, a prompt's messages, list
entries one a line (a tool with its parameters' types and defaults), and the server's notifications (log
messages, progress) as lines on stderr."""

from __future__ import annotations

import base64
import binascii
import json
from typing import Any, TextIO

from .arguments import signature
from .failures import one_line


def _size(data: Any) -> str:
    try:
        return f"{len(base64.b64decode(str(data), validate=False))} bytes"
    except (binascii.Error, ValueError):
        return "undecodable data"


def block_text(block: dict[str, Any]) -> str:
    """One content block as text: its text, or a one-line summary of what it holds."""
    kind = block.get("type")
    if kind == "text":
        return str(block.get("text", ""))
    if kind in ("image", "audio"):
        return f"[{kind} {block.get('mimeType', '?')}, {_size(block.get('data', ''))}]"
    if kind == "resource":
        resource = block.get("resource") or {}
        head = f"[resource {resource.get('uri', '?')}{', ' + resource['mimeType'] if resource.get('mimeType') else ''}"
        if "text" in resource:
            return f"{head}]\n{resource['text']}"
        return f"{head}, {_size(resource.get('blob', ''))}]"
    if kind == "resource_link":
        name = block.get("title") or block.get("name")
        return f"[link {block.get('uri', '?')}{' ' + repr(name) if name else ''}]"
    return f"[{kind or 'unknown'} block]"


def call_text(result: dict[str, Any]) -> str:
    """A CallToolResult as text."""
    blocks = [block for block in result.get("content") or [] if isinstance(block, dict)]
    texts = [block_text(block) for block in blocks]
    has_text = any(block.get("type") == "text" for block in blocks)
    if not has_text and "structuredContent" in result:
        texts.append(json.dumps(result["structuredContent"], indent=2, ensure_ascii=False))
    return "\n".join(texts)


def contents_text(result: dict[str, Any]) -> str:
    """A ReadResourceResult as text: each text content as it is, a blob as one summary line."""
    shown: list[str] = []
    for content in result.get("contents") or []:
        if not isinstance(content, dict):
            continue
        if "text" in content:
            shown.append(str(content["text"]))
        else:
            mime = f"{content['mimeType']}, " if content.get("mimeType") else ""
            shown.append(f"[blob {content.get('uri', '?')}, {mime}{_size(content.get('blob', ''))}]")
    return "\n".join(shown)


def prompt_text(result: dict[str, Any]) -> str:
    """A GetPromptResult as text: each message as `role: content`."""
    shown: list[str] = []
    for message in result.get("messages") or []:
        if isinstance(message, dict):
            content = message.get("content")
            text = block_text(content) if isinstance(content, dict) else ""
            shown.append(f"{message.get('role', '?')}: {text}")
    return "\n".join(shown)


LIST_KEYS = {
    "tools": ("tools/list", "tools"),
    "resources": ("resources/list", "resources"),
    "templates": ("resources/templates/list", "resourceTemplates"),
    "prompts": ("prompts/list", "prompts"),
}
"""`lambda-mcp list` kinds: the method and the result's key."""


def entry_line(kind: str, entry: dict[str, Any]) -> str:
    """One listed tool, resource, template or prompt on one line."""
    if kind == "resources":
        name = str(entry.get("uri", "?"))
        extra = f" ({entry['name']})" if entry.get("name") else ""
    elif kind == "templates":
        name = str(entry.get("uriTemplate", "?"))
        extra = f" ({entry['name']})" if entry.get("name") else ""
    else:
        name = str(entry.get("name", "?"))
        extra = ""
        if kind == "prompts" and entry.get("arguments"):
            wanted = [a.get("name", "?") + ("" if a.get("required") else "?") for a in entry["arguments"]]
            extra = f"({', '.join(wanted)})"
        if kind == "tools":
            name, extra = signature(name, entry.get("inputSchema")), ""
    description = entry.get("description") or entry.get("title") or ""
    first = str(description).strip().splitlines()[0] if str(description).strip() else ""
    return f"{name}{extra}" + (f"  {one_line(first, 100)}" if first else "")


class Notices:
    """Shows the server's notifications on stderr, one line each."""

    def __init__(self, stderr: TextIO) -> None:
        self.stderr = stderr

    def __call__(self, message: dict[str, Any]) -> None:
        method = message.get("method")
        params = message.get("params") or {}
        if method == "notifications/message":
            data = params.get("data")
            text = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False)
            logger = f" {params['logger']}" if params.get("logger") else ""
            line = f"[{params.get('level', 'info')}{logger}] {text}"
        elif method == "notifications/progress":
            total = f"/{params['total']}" if "total" in params else ""
            note = f" {params['message']}" if params.get("message") else ""
            line = f"[progress {params.get('progress')}{total}]{note}"
        else:
            return
        print(one_line(line), file=self.stderr, flush=True)
