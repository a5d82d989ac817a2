"""What passes between the caller and a mounted server during one request: the caller's progress token and
capabilities go out; the server's progress and log notifications come back to the caller; its questions
(a legacy server's elicitation, sampling or roots request, a 2026 server's `inputRequests`) are asked of
the caller with `ctx.ask` under keys stable across re-runs, and the answers go back. A call the caller
cancelled stops there."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..context import ClientError
from ..suspensions import CancelledByClient

if TYPE_CHECKING:
    from ..context import Context


class Passthrough:
    """One request's link between the caller (`ctx`; None: no caller, as for a list kept for everyone) and
    the mounted server `prefix`."""

    def __init__(self, ctx: Context | None, prefix: str) -> None:
        self.ctx = ctx
        self.prefix = prefix
        self._asked = 0

    def meta(self) -> dict[str, Any]:
        """The `_meta` the request carries to the server: the caller's progress token, when it sent one."""
        token = self.ctx.progress_token if self.ctx is not None else None
        return {"progressToken": token} if token is not None else {}

    def capabilities(self) -> dict[str, Any]:
        """What the server may ask for: what the caller can answer."""
        return dict(self.ctx.client_capabilities) if self.ctx is not None else {}

    async def notify(self, message: dict[str, Any]) -> None:
        """Pass the server's progress and log messages to the caller (others are dropped)."""
        params = message.get("params")
        if self.ctx is None or not isinstance(params, dict):
            return
        method = message.get("method")
        if method == "notifications/progress" and isinstance(params.get("progress"), (int, float)):
            total = params.get("total") if isinstance(params.get("total"), (int, float)) else None
            text = params.get("message") if isinstance(params.get("message"), str) else None
            await self.ctx.report_progress(params["progress"], total, text)
        elif method == "notifications/message" and isinstance(params.get("level"), str):
            source = params.get("logger") if isinstance(params.get("logger"), str) else self.prefix
            await self.ctx.log(params["level"], params.get("data"), source)

    async def answer_request(self, message: dict[str, Any]) -> dict[str, Any]:
        """The JSON-RPC response to a legacy server's own request, asked of the caller (may suspend the call)."""
        self._asked += 1
        key = f"{self.prefix}#{self._asked}"
        request = {"method": message.get("method"), "params": message.get("params") or {}}
        if self.ctx is None:
            error = {"code": -32601, "message": "no caller to ask"}
            return {"jsonrpc": "2.0", "id": message.get("id"), "error": error}
        try:
            answer = (await self.ctx.ask({key: request}))[key]
        except ClientError as exc:
            error = {"code": exc.code, "message": exc.message}
            return {"jsonrpc": "2.0", "id": message.get("id"), "error": error}
        return {"jsonrpc": "2.0", "id": message.get("id"), "result": answer}

    async def answer_all(self, asked: dict[str, Any], round_number: int) -> dict[str, Any]:
        """The `inputResponses` to a 2026 server's `inputRequests`, asked of the caller (may suspend the call)."""
        if self.ctx is None:
            raise CancelledByClient("no caller to ask")
        keys = {f"{self.prefix}:{round_number}:{key}": key for key in asked}
        answers = await self.ctx.ask({ours: asked[theirs] for ours, theirs in keys.items()})
        return {theirs: answers[ours] for ours, theirs in keys.items() if ours in answers}

    def cancelled(self) -> bool:
        """Whether the caller cancelled the request."""
        return self.ctx is not None and self.ctx.cancelled
