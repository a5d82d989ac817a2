"""Running one operation's call: the request made from the arguments, authenticated (`auth=`: it signs exactly
what is sent), sent on the process-wide HTTP client within what is left of the request's time, and the
answer as the tool's result. An API that cannot be reached, or does not answer in time, is a tool error
naming its host; redirects are not followed."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..errors import ToolError
from ..outbound.auth import OutboundAuth, Outgoing
from ..outbound.http import client, seconds_left
from .inputs import Plan
from .outgoing import Request, authority, request
from .outputs import Answer, Received, result

if TYPE_CHECKING:
    from ..context import Context

MAX_BYTES = 5 * 1024 * 1024
"""The largest answer a call reads (a Lambda response holds 6 MB)."""
ERROR_BYTES = 16 * 1024
"""What is read of an error's body (its excerpt is shorter)."""


@dataclass(frozen=True)
class Call:
    """One operation's call, made once at declaration: everything but the arguments."""

    method: str
    path: str
    base_url: str
    plan: Plan
    answer: Answer
    auth: OutboundAuth | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    timeout: float = 30.0

    @property
    def label(self) -> str:
        return f"{self.method} {self.path}"

    async def __call__(self, arguments: dict[str, Any], ctx: Context) -> dict[str, Any]:
        outgoing = request(self.plan, self.base_url, self.path, arguments, self.headers, self.answer.accept)
        headers = dict(outgoing.headers)
        if self.auth is not None:
            signed = Outgoing(self.method, outgoing.url, dict(headers), outgoing.body)
            headers.update(await self.auth.headers(signed, ctx))
        received = await self._send(Request(outgoing.url, headers, outgoing.body), seconds_left(ctx, self.timeout))
        return result(self.answer, self.label, outgoing.url, received)

    async def _send(self, sent: Request, timeout: float) -> Received:
        import httpx

        host = authority(sent.url)
        try:
            async with client().stream(
                self.method, sent.url, headers=sent.headers, content=sent.body, timeout=timeout
            ) as response:
                limit = MAX_BYTES if response.is_success else ERROR_BYTES
                body = bytearray()
                async for chunk in response.aiter_bytes():
                    body += chunk
                    if len(body) > limit and response.is_success:
                        raise ToolError(f"{self.label} answered more than {MAX_BYTES // (1024 * 1024)} MB")
                    if len(body) > limit:
                        break
                return Received(
                    response.status_code,
                    response.reason_phrase,
                    response.headers.get("content-type", ""),
                    bytes(body),
                    response.headers.get("location"),
                )
        except httpx.TimeoutException:
            raise ToolError(f"{host} did not answer {self.label} within {timeout:.3g} s") from None
        except httpx.HTTPError as exc:
            detail = " ".join(str(exc).split())[:200]
            raise ToolError(
                f"could not reach {host} for {self.label}: {type(exc).__name__} {detail}".rstrip()
            ) from None
