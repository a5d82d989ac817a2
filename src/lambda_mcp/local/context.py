"""`LambdaContext`: the parts of the Lambda context object the handlers use, for local invocations."""

from __future__ import annotations

import time
import uuid
from typing import Any

TIMEOUT_MS = 30_000


class LambdaContext:
    def __init__(self, timeout_ms: int = TIMEOUT_MS) -> None:
        self.function_name = "lambda-mcp-dev"
        self.function_version = "$LATEST"
        self.memory_limit_in_mb = 512
        self.aws_request_id = str(uuid.uuid4())
        self.invoked_function_arn = "arn:aws:lambda:us-east-1:000000000000:function:lambda-mcp-dev"
        self.log_group_name = "/aws/lambda/lambda-mcp-dev"
        self.client_context: Any = None
        self.identity: Any = None
        self.log_stream_name = "local"
        self._deadline = time.monotonic() + timeout_ms / 1000

    def get_remaining_time_in_millis(self) -> int:
        return max(0, int((self._deadline - time.monotonic()) * 1000))
