"""An audit log middleware: one JSON line per request on standard output (in Lambda: the function's
CloudWatch log stream, whatever the logging level), with who asked for what, on which era, how it ended
and how long it took. Logs Insights finds them with `filter ispresent(audit)`.

    app.middleware(audit)
"""

from __future__ import annotations

import json
import time
from typing import Any

from lambda_mcp import MCPError
from lambda_mcp.middleware import CallNext, RequestInfo


async def audit(request: RequestInfo, call_next: CallNext) -> dict[str, Any]:
    started = time.perf_counter()
    outcome = "ok"
    try:
        result = await call_next(request)
        if result.get("isError") is True:
            outcome = "tool error"
        elif result.get("resultType") == "input_required":
            outcome = "input required"
        return result
    except MCPError as exc:
        outcome = f"error {exc.code}"
        raise
    finally:
        target = request.params.get("name") or request.params.get("uri")
        line = {
            "audit": request.method,
            "target": target if isinstance(target, str) else None,
            "principal": request.principal,
            "era": request.era,
            "task_id": request.task_id,
            "outcome": outcome,
            "duration_ms": round((time.perf_counter() - started) * 1000, 2),
        }
        print(json.dumps(line), flush=True)
