"""Validate what the server emits against the official JSON Schema of the revision it speaks.

The schemas are copied unchanged into `tests/schemas/` (origin in its README).
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema

SCHEMAS = Path(__file__).resolve().parent.parent / "schemas"

RESULT_TYPES = {
    "initialize": "InitializeResult",
    "ping": "EmptyResult",
    "logging/setLevel": "EmptyResult",
    "resources/subscribe": "EmptyResult",
    "resources/unsubscribe": "EmptyResult",
    "server/discover": "DiscoverResult",
    "tools/list": "ListToolsResult",
    "tools/call": "CallToolResult",
    "resources/list": "ListResourcesResult",
    "resources/templates/list": "ListResourceTemplatesResult",
    "resources/read": "ReadResourceResult",
    "prompts/list": "ListPromptsResult",
    "prompts/get": "GetPromptResult",
    "completion/complete": "CompleteResult",
    "subscriptions/listen": "SubscriptionsListenResult",
}
NOTIFICATION_TYPES = {
    "notifications/progress": "ProgressNotification",
    "notifications/message": "LoggingMessageNotification",
    "notifications/tools/list_changed": "ToolListChangedNotification",
    "notifications/prompts/list_changed": "PromptListChangedNotification",
    "notifications/resources/list_changed": "ResourceListChangedNotification",
    "notifications/resources/updated": "ResourceUpdatedNotification",
    "notifications/subscriptions/acknowledged": "SubscriptionsAcknowledgedNotification",
    "notifications/elicitation/complete": "ElicitationCompleteNotification",
}
REQUEST_TYPES = {
    "sampling/createMessage": "CreateMessageRequest",
    "elicitation/create": "ElicitRequest",
    "roots/list": "ListRootsRequest",
    "ping": "PingRequest",
}


TASKS_EXTENSION = "ext-tasks"
"""Pseudo-version naming the tasks extension's schema (`ext-tasks-schema.json`)."""
TASK_RESULT_TYPES = {
    "tasks/get": "GetTaskResult",
    "tasks/update": "UpdateTaskResult",
    "tasks/cancel": "CancelTaskResult",
}
LEGACY_TASK_RESULT_TYPES = {
    "tasks/get": "GetTaskResult",
    "tasks/list": "ListTasksResult",
    "tasks/cancel": "CancelTaskResult",
    "tasks/result": "GetTaskPayloadResult",
}


APPS_EXTENSION = "io.modelcontextprotocol/ui"


@cache
def _document(version: str) -> dict[str, Any]:
    if version == APPS_EXTENSION:
        return json.loads((SCHEMAS / "ext-apps-schema.json").read_text())
    name = "ext-tasks-schema.json" if version == TASKS_EXTENSION else f"schema-{version}.json"
    return json.loads((SCHEMAS / name).read_text())


@cache
def _validator(version: str, type_name: str) -> jsonschema.protocols.Validator:
    document = _document(version)
    defs_key = "$defs" if "$defs" in document else "definitions"
    if type_name not in document[defs_key]:
        raise KeyError(f"{type_name} is not defined in schema {version}")
    root = {**document, "$ref": f"#/{defs_key}/{type_name}"}
    cls = jsonschema.validators.validator_for(document)
    return cls(root)


def errors_for(instance: Any, version: str, type_name: str) -> list[str]:
    return [
        f"{type_name}@{version}: {e.json_path}: {e.message}"
        for e in _validator(version, type_name).iter_errors(instance)
    ]


def message_errors(message: Any, version: str, method: str | None = None) -> list[str]:
    """Schema errors of one server-to-client JSON-RPC message; `method` is the request's, for responses."""
    if not isinstance(message, dict):
        return [f"not a JSON-RPC object: {message!r}"]
    problems: list[str] = []
    if "error" in message:
        envelope = "JSONRPCError" if version in ("2025-03-26", "2025-06-18") else "JSONRPCErrorResponse"
        if envelope == "JSONRPCError" and "id" not in message:
            envelope_doc = {**message, "id": 0}  # those revisions cannot express an id-less error (parse errors)
            return errors_for(envelope_doc, version, envelope)
        return errors_for(message, version, envelope)
    if "result" in message:
        result = message["result"]
        modern = version == "2026-07-28"
        if modern and isinstance(result, dict) and result.get("resultType") == "input_required":
            problems += errors_for(result, version, "InputRequiredResult")
        elif modern and isinstance(result, dict) and result.get("resultType") == "task":
            problems += errors_for(result, TASKS_EXTENSION, "CreateTaskResult")
        elif modern and method in TASK_RESULT_TYPES:
            problems += errors_for(result, TASKS_EXTENSION, TASK_RESULT_TYPES[method or ""])
        elif not modern and method == "tools/call" and isinstance(result, dict) and "task" in result:
            problems += errors_for(result, version, "CreateTaskResult")
        elif not modern and method in LEGACY_TASK_RESULT_TYPES:
            problems += errors_for(result, version, LEGACY_TASK_RESULT_TYPES[method or ""])
        elif method in RESULT_TYPES:
            problems += errors_for(result, version, RESULT_TYPES[method or ""])
        else:  # every method the kit answers has its type: a result for anything else is a bug
            problems.append(f"a result for {method!r}, which has no result type in {version}")
        if not modern and isinstance(result, dict) and "resultType" in result:
            problems.append(f"resultType sent to a {version} client")
        if not isinstance(message.get("id"), (str, int)):
            problems.append("response without a valid id")
        return problems
    name = str(message.get("method"))
    types = REQUEST_TYPES if "id" in message else NOTIFICATION_TYPES
    if name not in types:
        return [f"{'request' if 'id' in message else 'notification'} {name!r} is not one the server sends"]
    return errors_for(message, version, types[name])


def sse_messages(body: bytes) -> list[dict[str, Any]]:
    """The JSON messages of an SSE body (priming events with empty data are skipped)."""
    messages = []
    for block in body.decode().split("\n\n"):
        data = "\n".join(line[5:].lstrip() for line in block.splitlines() if line.startswith("data:"))
        if data.strip():
            messages.append(json.loads(data))
    return messages


def body_messages(content_type: str, body: bytes) -> list[dict[str, Any]]:
    if not body:
        return []
    if content_type.startswith("text/event-stream"):
        return sse_messages(body)
    decoded = json.loads(body)
    return decoded if isinstance(decoded, list) else [decoded]
