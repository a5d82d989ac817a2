"""A per-principal rate limit middleware backed by the kit's DynamoDB table: one conditional counter per
principal and time window, which expires with the table's TTL, so every Lambda instance (and every
`lambda-mcp dev` process on the table) shares the count.

    app.middleware(RateLimit(os.environ["LAMBDA_MCP_TABLE_NAME"], limit=60, window_seconds=60))

A request over the limit is answered with a JSON-RPC error (-32000) saying when to retry. Each counted
request costs one conditional UpdateItem (1 WCU). Task runs on the worker are not counted again (the
`tools/call` that created the task was).
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from typing import Any

import anyio.to_thread

from lambda_mcp import MCPError
from lambda_mcp.middleware import CallNext, RequestInfo

RATE_LIMITED = -32000


class RateLimit:
    def __init__(
        self,
        table: str,
        *,
        limit: int,
        window_seconds: int = 60,
        methods: Iterable[str] = ("tools/call",),
        client: Any | None = None,
    ) -> None:
        self.table = table
        self.limit = limit
        self.window_seconds = window_seconds
        self.methods = frozenset(methods)
        self._client = client

    async def __call__(self, request: RequestInfo, call_next: CallNext) -> dict[str, Any]:
        if request.method in self.methods and request.task_id is None:
            principal = request.principal or "anonymous"
            window = int(time.time() // self.window_seconds)
            if not await anyio.to_thread.run_sync(self._take, principal, window):
                retry = (window + 1) * self.window_seconds - int(time.time())
                raise MCPError(
                    RATE_LIMITED,
                    f"Rate limit exceeded: at most {self.limit} {request.method} per {self.window_seconds} s;"
                    f" retry in {retry} s",
                    {"retryAfterSeconds": retry, "limit": self.limit},
                )
        return await call_next(request)

    def _take(self, principal: str, window: int) -> bool:
        """Count one request in this window unless the count has reached the limit (one UpdateItem)."""
        client = self._client
        if client is None:
            import boto3

            client = self._client = boto3.client("dynamodb")
        try:
            client.update_item(
                TableName=self.table,
                Key={"pk": {"S": f"RATE#{principal}"}, "sk": {"S": str(window)}},
                UpdateExpression="ADD #count :one SET expires_at = :expires",
                ConditionExpression="attribute_not_exists(#count) OR #count < :limit",
                ExpressionAttributeNames={"#count": "count"},
                ExpressionAttributeValues={
                    ":one": {"N": "1"},
                    ":limit": {"N": str(self.limit)},
                    ":expires": {"N": str((window + 2) * self.window_seconds)},
                },
            )
        except client.exceptions.ConditionalCheckFailedException:
            return False
        return True
