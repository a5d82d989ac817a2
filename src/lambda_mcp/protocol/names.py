"""Names the protocol fixes: `_meta` keys, extension ids, log levels, and the tasks capability shape."""

from __future__ import annotations

import re
from typing import Any

META_VERSION = "io.modelcontextprotocol/protocolVersion"
META_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"
META_LOG_LEVEL = "io.modelcontextprotocol/logLevel"
META_SERVER_INFO = "io.modelcontextprotocol/serverInfo"
SUBSCRIPTION_ID = "io.modelcontextprotocol/subscriptionId"
"""`_meta` key tying a 2026 `subscriptions/listen` stream's notifications to its request."""
RELATED_TASK = "io.modelcontextprotocol/related-task"
"""`_meta` key of a message that belongs to a task (2025-11-25)."""

TASKS_EXTENSION = "io.modelcontextprotocol/tasks"
"""The 2026 tasks extension (SEP-2663), declared in `capabilities.extensions`."""
LEGACY_TASKS_CAPABILITY: dict[str, Any] = {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}
"""The 2025-11-25 `tasks` server capability: tools/call may be task-augmented; list and cancel work."""

LOG_LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")
"""`logging/setLevel` levels (RFC 5424 severities), least severe first."""

TOOL_NAME = r"[A-Za-z0-9_.-]{1,128}"
"""The tool-name rule (2025-11-25, "Tool names"): 1 to 128 ASCII letters, digits, `_`, `-` and `.`."""


def is_tool_name(name: object) -> bool:
    """Whether `name` is a valid tool name (the kit checks the names it makes: OpenAPI, mounts, Lambda tools)."""
    return isinstance(name, str) and re.fullmatch(TOOL_NAME, name) is not None
