"""The bounds the kit puts on what one request may carry, so that what a request can make the kit
store or do stays small (docs/decisions.md, "Bounded cost per request"). Over a bound, the request is
answered with a JSON-RPC error (or 413 for the body) and nothing is stored."""

from __future__ import annotations

MAX_DEPTH = 64
"""JSON nesting of a request body."""
MAX_BATCH = 32
"""Members of a 2025-03-26 batch."""
MAX_ID_BYTES = 128
"""A JSON-RPC request id given as a string, in UTF-8 bytes (integers: 64-bit). Ids become parts of
stream names and storage keys; clients use numbers or UUIDs."""
MAX_INTEGER_ID = 2**63 - 1
MAX_SESSION_ID_CHARS = 128
"""An `MCP-Session-Id` the kit will look up (it mints 32 characters)."""
MAX_TASK_ID_CHARS = 128
"""A `taskId` the kit will look up (it mints 32 characters)."""
MAX_URI_CHARS = 2048
"""A resource URI to read or subscribe to."""
MAX_SUBSCRIPTIONS = 32
"""Resource subscriptions of one legacy session (they live in the session item, read on every request)."""
MAX_SUBSCRIBED_URI_CHARS = 512
"""A resource URI a legacy session subscribes to: with `MAX_SUBSCRIPTIONS`, at most 16 KB of the item."""
MAX_CLIENT_DATA_BYTES = 8192
"""`initialize`'s client capabilities and client info, as stored JSON (clients send well under 1 KB).
With the subscriptions, a session item stays under 25 KB: at most 7 read units per request, where the
item limit (400 KB) would allow 100."""
MAX_ARGUMENTS_BYTES = 65_536
"""A `tools/call`'s arguments, as JSON: stored with a task, or with a suspended call."""
MAX_ANSWER_BYTES = 65_536
"""A client's response to a server-to-client request, as JSON (it is stored until the call re-runs)."""
MAX_META_BYTES = 16_384
"""A request's `params._meta`, as JSON (2026: the client capabilities included, at most
`MAX_CLIENT_DATA_BYTES` of it); a task or a suspended call stores it with the request."""
MAX_RECORDED_ANSWERS_BYTES = 196_608
"""Every answer a task or a suspended call keeps, as JSON. An answer that would pass it is refused
(-32602 on `tasks/update`) or recorded as a client error the handler sees (a legacy answer POST)."""
