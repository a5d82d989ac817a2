"""The kit's own client to a mounted remote MCP server: one endpoint, either protocol era (found with a
2026 `server/discover`, falling back to a legacy `initialize` session), over the process-wide HTTP client.

A request's answer may come as JSON or as an SSE stream; notifications on the way (progress, log
messages) and a legacy server's own requests (elicitation, sampling, roots) go to the `Passthrough` of
the call, and a 2026 `input_required` result is answered through it and retried with the echoed
`requestState`. A legacy session is opened once per process and identity (per caller when the mount
sends the caller's token), and opened again when the server forgets it (404).
"""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from importlib import metadata
from typing import TYPE_CHECKING, Any

from ...protocol import revisions
from ...protocol.errors import MCPError
from ...protocol.names import META_CAPABILITIES, META_SERVER_INFO, META_VERSION
from ...protocol.request_headers import client_headers
from ..outbound.auth import CallerToken, ConnectionToken, OutboundAuth, Outgoing
from ..outbound.http import client, seconds_left
from ..suspensions import CancelledByClient
from .passthrough import Passthrough

if TYPE_CHECKING:
    from ..context import Context

logger = logging.getLogger("lambda_mcp")

META_CLIENT_INFO = "io.modelcontextprotocol/clientInfo"
MAX_ROUNDS = 10
MAX_SESSIONS = 256
WATCH_SECONDS = 0.1
"""How often a call waiting on a mounted server looks whether its caller cancelled it."""
_ACCEPT = "application/json, text/event-stream"


class MountUnavailable(Exception):
    """The mounted server could not be reached or answered with something other than MCP."""


@dataclass
class _Session:
    session_id: str | None
    version: str


class MountClient:
    """Requests to one remote MCP endpoint on behalf of the calls a mount serves."""

    def __init__(
        self,
        url: str,
        *,
        label: str,
        auth: OutboundAuth | None,
        headers: dict[str, str],
        protocol: str,
        timeout: float,
    ) -> None:
        if protocol != "auto" and protocol not in revisions.SUPPORTED:
            from ..errors import DeclarationError

            raise DeclarationError(
                f"app.mount(protocol={protocol!r}): 'auto' or one of {', '.join(revisions.SUPPORTED)}"
            )
        self.url = url
        self.label = label
        self.auth = auth
        self.headers = {name.lower(): value for name, value in headers.items()}
        self.timeout = timeout
        self.era: str | None = None if protocol == "auto" else ("modern" if revisions.is_modern(protocol) else "legacy")
        self._legacy_version = protocol if self.era == "legacy" else revisions.NEWEST_LEGACY
        self._sessions: dict[str, _Session] = {}
        self._next_id = 0

    # -- requests -----------------------------------------------------------------------------
    async def request(
        self,
        method: str,
        params: dict[str, Any],
        ctx: Context | None,
        via: Passthrough,
        routing: Mapping[str, str] | None = None,
    ) -> dict[str, Any]:
        """The result of `method` at the mounted server; `MCPError` for its JSON-RPC error, `MountUnavailable`
        when it cannot be reached. `routing`: a tool's `Mcp-Param-*` headers (header -> argument), for 2026."""
        if self.era is None:
            self.era = await self._detect(ctx)
        if self.era == "modern":
            return await self._modern(method, params, ctx, via, routing)
        return await self._legacy(method, params, ctx, via)

    async def _modern(
        self,
        method: str,
        params: dict[str, Any],
        ctx: Context | None,
        via: Passthrough,
        routing: Mapping[str, str] | None,
    ) -> dict[str, Any]:
        current = params
        for round_number in range(MAX_ROUNDS):
            meta = {**via.meta(), META_VERSION: revisions.MODERN, META_CAPABILITIES: via.capabilities()}
            meta[META_CLIENT_INFO] = _client_info()
            body = self._message(method, {**current, "_meta": meta})
            headers = {"mcp-protocol-version": revisions.MODERN, **client_headers(method, current, routing)}
            result = await self._answered(body, headers, ctx, via)
            if result.get("resultType") != "input_required":
                return _plain(result)
            asked = result.get("inputRequests")
            answers = await via.answer_all(asked if isinstance(asked, dict) else {}, round_number)
            current = {**params, "inputResponses": answers}
            if "requestState" in result:
                current["requestState"] = result["requestState"]
        raise MountUnavailable(f"{self.label} asked for input {MAX_ROUNDS} times over")

    async def _legacy(
        self, method: str, params: dict[str, Any], ctx: Context | None, via: Passthrough
    ) -> dict[str, Any]:
        identity = self._identity(ctx)
        for attempt in range(2):
            session = self._sessions.get(identity) or await self._open(identity, ctx)
            meta = via.meta()
            body = self._message(method, {**params, **({"_meta": meta} if meta else {})})
            try:
                return _plain(await self._answered(body, self._session_headers(session), ctx, via))
            except _SessionGone:
                self._sessions.pop(identity, None)
                if attempt:
                    raise MountUnavailable(f"{self.label} forgot the session it had just opened") from None
        raise AssertionError("unreachable")

    async def _answered(
        self, body: dict[str, Any], headers: dict[str, str], ctx: Context | None, via: Passthrough
    ) -> dict[str, Any]:
        """Send `body`; pass what comes before its answer through `via`; return the answer's result. When the
        caller cancels meanwhile, the request is abandoned (a legacy server is told) and `CancelledByClient`
        raised."""
        import anyio

        answer: dict[str, Any] | None = None
        failure: BaseException | None = None
        with anyio.CancelScope() as abandoned:
            async with anyio.create_task_group() as group:
                group.start_soon(_watch, via, abandoned)
                try:
                    answer = await self._read(body, headers, ctx, via)
                except anyio.get_cancelled_exc_class():
                    raise
                except BaseException as exc:  # carried out of the group as it is (a group would wrap it)
                    failure = exc
                finally:
                    group.cancel_scope.cancel()
        if failure is not None:
            raise failure
        if abandoned.cancelled_caught:
            raise CancelledByClient("the client cancelled this request")
        assert answer is not None
        return _outcome(answer, self.label)

    async def _read(
        self, body: dict[str, Any], headers: dict[str, str], ctx: Context | None, via: Passthrough
    ) -> dict[str, Any]:
        try:
            async with self._exchange(body, headers, ctx) as (_, messages):
                async for message in messages:
                    if "method" in message and "id" in message:  # a legacy server's own request
                        await self._send_only(await via.answer_request(message), headers, ctx)
                    elif "method" in message:
                        await via.notify(message)
                    elif message.get("id") == body["id"]:
                        return message
        except (MountUnavailable, _SessionGone):
            raise  # nothing runs there to stop
        except BaseException:  # abandoned (cancelled, suspended to ask our client) while the server works on it
            if self.era == "legacy":
                await self._cancel(body["id"], headers, ctx)
            raise
        raise MountUnavailable(f"{self.label} ended its response to {body['method']} without answering it")

    # -- the legacy session ---------------------------------------------------------------------
    async def _open(self, identity: str, ctx: Context | None) -> _Session:
        params = {
            "protocolVersion": self._legacy_version,
            "capabilities": _legacy_capabilities(self._legacy_version),
            "clientInfo": _client_info(),
        }
        body = self._message("initialize", params)
        async with self._exchange(body, {"mcp-protocol-version": self._legacy_version}, ctx) as (headers, messages):
            result: dict[str, Any] | None = None
            async for message in messages:
                if message.get("id") == body["id"]:
                    result = _outcome(message, self.label)
                    break
        version = result.get("protocolVersion") if result else None
        if not isinstance(version, str) or not revisions.is_legacy(version):
            raise MountUnavailable(f"{self.label} answered initialize with protocol version {version!r}")
        session = _Session(headers.get("mcp-session-id"), version)
        await self._send_only(
            {"jsonrpc": "2.0", "method": "notifications/initialized"}, self._session_headers(session), ctx
        )
        if len(self._sessions) >= MAX_SESSIONS:
            self._sessions.pop(next(iter(self._sessions)))
        self._sessions[identity] = session
        return session

    @staticmethod
    def _session_headers(session: _Session) -> dict[str, str]:
        headers = {"mcp-protocol-version": session.version}
        if session.session_id:
            headers["mcp-session-id"] = session.session_id
        return headers

    def _identity(self, ctx: Context | None) -> str:
        """Whose session a request uses: the caller's when the mount sends the caller's token, else the process's."""
        per_caller = isinstance(self.auth, (CallerToken, ConnectionToken))
        return (ctx.principal or "") if per_caller and ctx is not None else ""

    async def _cancel(self, request_id: int, headers: dict[str, str], ctx: Context | None) -> None:
        """Tell a legacy server that the request it is running is abandoned (best effort, never raising)."""
        import contextlib

        import anyio

        notice = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": request_id}}
        # the server may be gone: the abandoned call ends anyway
        with anyio.CancelScope(shield=True), anyio.move_on_after(2.0), contextlib.suppress(Exception):
            await self._send_only(notice, headers, None)
            logger.info("%s: request %s abandoned, the server was told", self.label, request_id)

    # -- era detection --------------------------------------------------------------------------
    async def _detect(self, ctx: Context | None) -> str:
        """`modern` when the server answers a 2026 `server/discover` naming 2026-07-28, else `legacy`."""
        meta = {META_VERSION: revisions.MODERN, META_CAPABILITIES: {}, META_CLIENT_INFO: _client_info()}
        body = self._message("server/discover", {"_meta": meta})
        headers = {"mcp-protocol-version": revisions.MODERN, **client_headers("server/discover", {}, None)}
        try:
            async with self._exchange(body, headers, ctx) as (_, messages):
                async for message in messages:
                    if message.get("id") == body["id"]:
                        result = message.get("result")
                        supported = result.get("supportedVersions") if isinstance(result, dict) else None
                        return "modern" if isinstance(supported, list) and revisions.MODERN in supported else "legacy"
        except _Refused:
            pass
        return "legacy"

    # -- HTTP -----------------------------------------------------------------------------------
    def _message(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        self._next_id += 1
        return {"jsonrpc": "2.0", "id": self._next_id, "method": method, "params": params}

    async def _send_only(self, message: dict[str, Any], headers: dict[str, str], ctx: Context | None) -> None:
        async with self._exchange(message, headers, ctx) as (_, messages):
            async for _ in messages:
                pass

    @asynccontextmanager
    async def _exchange(
        self, message: dict[str, Any], headers: dict[str, str], ctx: Context | None
    ) -> AsyncIterator[tuple[dict[str, str], AsyncIterator[dict[str, Any]]]]:
        import httpx

        content = json.dumps(message, separators=(",", ":")).encode()
        sent = {"content-type": "application/json", "accept": _ACCEPT, **self.headers, **headers}
        if self.auth is not None:
            sent.update(await self.auth.headers(Outgoing("POST", self.url, sent, content), ctx))
        http = client()
        request = http.build_request(
            "POST", self.url, content=content, headers=sent, timeout=seconds_left(ctx, self.timeout)
        )
        try:
            response = await http.send(request, stream=True)
        except httpx.HTTPError as exc:
            raise MountUnavailable(f"{self.label} could not be reached: {_reason(exc)}") from None
        try:
            if response.status_code == 404 and "mcp-session-id" in headers:
                raise _SessionGone()
            if response.status_code in (400, 404, 405) and message.get("method") == "server/discover":
                raise _Refused()
            if response.status_code >= 400:
                excerpt = (await response.aread())[:300].decode("utf-8", "replace")
                raise MountUnavailable(f"{self.label} answered HTTP {response.status_code}: {excerpt}".rstrip(": "))
            yield dict(response.headers), _messages(response, self.label)
        except httpx.HTTPError as exc:
            raise MountUnavailable(f"{self.label} broke off its answer: {_reason(exc)}") from None
        finally:
            await response.aclose()


async def _watch(via: Passthrough, abandoned: Any) -> None:
    """Cancel `abandoned` when the caller cancels the request (a flag the transport keeps in memory)."""
    import anyio

    while not via.cancelled():
        await anyio.sleep(WATCH_SECONDS)
    abandoned.cancel()


class _SessionGone(Exception):
    """The server no longer knows the legacy session (HTTP 404): open a new one."""


class _Refused(Exception):
    """The server refused a 2026 request as a legacy server does."""


async def _messages(response: Any, label: str) -> AsyncIterator[dict[str, Any]]:
    """The JSON-RPC messages of a response: one JSON body (or a batch), or the events of an SSE stream."""
    kind = response.headers.get("content-type", "").split(";")[0].strip().lower()
    if response.status_code == 202 or not kind:
        return
    if kind == "application/json":
        for message in _listed(_parsed(await response.aread(), label), label):
            yield message
        return
    if kind != "text/event-stream":
        raise MountUnavailable(f"{label} answered with {kind}, not MCP")
    data: list[str] = []
    async for line in response.aiter_lines():
        if line.startswith("data:"):
            data.append(line[5:].removeprefix(" "))
        elif not line and data:
            text, data = "\n".join(data), []
            if text.strip():  # an event without data primes a resumable stream
                for message in _listed(_parsed(text, label), label):
                    yield message


def _parsed(text: str | bytes, label: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        raise MountUnavailable(f"{label} sent something that is not JSON") from None


def _listed(parsed: Any, label: str) -> list[dict[str, Any]]:
    items = parsed if isinstance(parsed, list) else [parsed]
    if not all(isinstance(item, dict) for item in items):
        raise MountUnavailable(f"{label} sent something that is not a JSON-RPC message")
    return items


def _outcome(message: dict[str, Any], label: str) -> dict[str, Any]:
    error = message.get("error")
    if isinstance(error, dict):
        code = error["code"] if isinstance(error.get("code"), int) else -32603
        raise MCPError(code, f"{label}: {error.get('message', 'error')}", error.get("data"))
    result = message.get("result")
    if not isinstance(result, dict):
        raise MountUnavailable(f"{label} answered without a result")
    return result


def _plain(result: dict[str, Any]) -> dict[str, Any]:
    """A result without the 2026 wire's own fields (the kit adds its own for its client's era)."""
    for key in ("resultType", "ttlMs", "cacheScope"):
        result.pop(key, None)
    meta = result.get("_meta")
    if isinstance(meta, dict):
        meta.pop(META_SERVER_INFO, None)
        if not meta:
            del result["_meta"]
    return result


def _legacy_capabilities(version: str) -> dict[str, Any]:
    elicitation: dict[str, Any] = {"form": {}, "url": {}} if revisions.names_form_mode(version) else {}
    return {"elicitation": elicitation, "sampling": {}, "roots": {}}


def _client_info() -> dict[str, str]:
    try:
        version = metadata.version("lambda-mcp")
    except metadata.PackageNotFoundError:
        version = "0"
    return {"name": "lambda-mcp-mount", "version": version}


def _reason(exc: Exception) -> str:
    return f"{type(exc).__name__}: {exc}".rstrip(": ") if str(exc) else type(exc).__name__
