"""Test an app in process: `Client(app)` drives it through the kit's real HTTP endpoint and dispatch (no
server, no socket), on the 2026-07-28 wire or a legacy revision, answering elicitation, sampling and
roots with plain functions.

```python
from lambda_mcp.testing import Client

async def test_forecast() -> None:  # with pytest's anyio plugin: @pytest.mark.anyio
    async with Client(app) as client:
        result = await client.call_tool("forecast", {"city": "Lisbon"})
        assert not result.is_error and "Lisbon" in result.text
```

`Client(app, scopes=["reports:read"])` (or `principal=...`, `claims={...}`) calls as that caller, its
scopes enforced as under auth `jwt`, its claims the handlers' `ctx.claims`; `raise_exceptions=True` raises
a handler's unexpected exception in the test. `call_tool(..., progress_handler=fn)` hands each progress
notification of the call to `fn(progress, total, message)`; `client.notifications` keeps them all.
"""

from .client import Client
from .results import RequestFailed, ToolResult

__all__ = ["Client", "RequestFailed", "ToolResult"]
