"""The HTTP side of the client: one httpx client, the headers every request carries (a bearer token,
`--header`s, a SigV4 signature), and a response read as the JSON-RPC messages it holds, from one JSON
body or an SSE stream, as they arrive."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Protocol

import httpx

from .failures import RemoteFailure, RpcError, Unauthorized, one_line

ACCEPT = "application/json, text/event-stream"


class Signer(Protocol):
    def sign(self, method: str, url: str, headers: dict[str, str], body: bytes) -> dict[str, str]:
        """The headers to add so that the request is authenticated."""
        ...


@dataclass(frozen=True)
class Reply:
    """A response under way: its headers, and its events as they arrive."""

    headers: httpx.Headers
    events: Iterator[Event]


@dataclass(frozen=True)
class Event:
    """One message of a response: a JSON-RPC message, or None for an SSE event without data (a priming
    event, a `retry:` before the server closes the stream)."""

    message: dict[str, Any] | None
    event_id: str | None = None
    retry_ms: int | None = None


class Wire:
    """Sends requests to one MCP endpoint."""

    def __init__(
        self, url: str, *, headers: dict[str, str], signer: Signer | None = None, timeout: float = 60.0
    ) -> None:
        self.url = url
        self.headers = headers
        self.signer = signer
        self.http = httpx.Client(timeout=httpx.Timeout(timeout), follow_redirects=False)

    def close(self) -> None:
        self.http.close()

    def _request(self, method: str, headers: dict[str, str], body: dict[str, Any] | None) -> httpx.Request:
        content = json.dumps(body, separators=(",", ":")).encode() if body is not None else b""
        merged = {"accept": ACCEPT, **({"content-type": "application/json"} if body is not None else {})}
        merged |= {**self.headers, **headers}
        if self.signer is not None:
            merged |= self.signer.sign(method, self.url, merged, content)
        return self.http.build_request(method, self.url, headers=merged, content=content)

    @contextmanager
    def exchange(
        self, method: str, body: dict[str, Any] | None, headers: dict[str, str] | None = None
    ) -> Iterator[Reply]:
        """Send a request; yield its response (headers, and events as they arrive). An HTTP error is raised before
        anything is yielded: `RpcError` when its body is a JSON-RPC error, else `RemoteFailure`."""
        request = self._request(method, headers or {}, body)
        try:
            response = self.http.send(request, stream=True)
        except httpx.TimeoutException:
            raise RemoteFailure(f"no answer from {self.url} in time (raise --timeout)") from None
        except httpx.HTTPError as exc:
            raise RemoteFailure(f"cannot reach {self.url}: {one_line(str(exc)) or type(exc).__name__}") from None
        try:
            if response.status_code >= 400:
                response.read()
                raise http_failure(response, authorization=request.headers.get("authorization"))
            yield Reply(response.headers, _events(response, self.url))
        except httpx.TimeoutException:
            raise RemoteFailure(f"{self.url} stopped answering mid-response (raise --timeout)") from None
        except httpx.HTTPError as exc:
            raise RemoteFailure(f"the connection to {self.url} failed: {one_line(str(exc))}") from None
        finally:
            response.close()

    def messages(
        self, method: str, body: dict[str, Any] | None, headers: dict[str, str] | None = None
    ) -> list[dict[str, Any]]:
        """Send a request and read every message of its response."""
        with self.exchange(method, body, headers) as reply:
            return [event.message for event in reply.events if event.message is not None]


def _events(response: httpx.Response, url: str) -> Iterator[Event]:
    kind = response.headers.get("content-type", "").split(";")[0].strip().lower()
    if response.status_code == 202 or (not kind and response.status_code == 204):
        return
    if kind == "application/json":
        response.read()
        try:
            message = response.json()
        except ValueError:
            raise RemoteFailure(f"{url} answered with JSON that does not parse") from None
        if not isinstance(message, dict):
            raise RemoteFailure(f"{url} answered with JSON that is not one JSON-RPC message")
        yield Event(message)
        return
    if kind == "text/event-stream":
        yield from _sse(response.iter_lines(), url)
        return
    response.read()
    raise RemoteFailure(f"{url} answered {response.status_code} with {kind or 'no content type'}, not MCP")


def _sse(lines: Iterator[str], url: str) -> Iterator[Event]:
    data: list[str] = []
    event_id: str | None = None
    retry: int | None = None
    pending = False
    for line in lines:
        if line == "":
            if pending:
                yield _event(data, event_id, retry, url)
            data, retry, pending = [], None, False
            continue
        if line.startswith(":"):
            continue
        field, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        pending = True
        if field == "data":
            data.append(value)
        elif field == "id":
            event_id = value
        elif field == "retry" and value.isdigit():
            retry = int(value)
    if pending:
        yield _event(data, event_id, retry, url)


def _event(data: list[str], event_id: str | None, retry: int | None, url: str) -> Event:
    text = "\n".join(data)
    if not text.strip():
        return Event(None, event_id, retry)
    try:
        message = json.loads(text)
    except ValueError:
        raise RemoteFailure(f"{url} sent an SSE event that is not JSON: {one_line(text, 120)}") from None
    if not isinstance(message, dict):
        raise RemoteFailure(f"{url} sent an SSE event that is not one JSON-RPC message")
    return Event(message, event_id, retry)


REST_STAGE = "v1"
"""The REST API's stage in template.yaml: the first segment of its MCP path (`/v1/mcp`)."""
CHALLENGE_HEADERS = ("www-authenticate", "x-amzn-remapped-www-authenticate", "lambda-mcp-challenge")
"""Where a challenge arrives: API Gateway renames a function's `WWW-Authenticate`, the kit sends a copy."""


def challenge_of(response: httpx.Response, body: Any = None) -> str:
    """The response's `WWW-Authenticate` challenge, under whichever name the front door left it, or in the
    JSON-RPC error's `data.wwwAuthenticate` (the kit's copy); "" when there is none."""
    for name in CHALLENGE_HEADERS:
        if response.headers.get(name):
            return str(response.headers[name])
    error = body.get("error") if isinstance(body, dict) else None
    data = error.get("data") if isinstance(error, dict) else None
    copy = data.get("wwwAuthenticate") if isinstance(data, dict) else None
    return copy if isinstance(copy, str) else ""


def http_failure(response: httpx.Response, *, authorization: str | None) -> RemoteFailure:
    """The one-line failure for an HTTP error response: its JSON-RPC error if it carries one, else the
    status with what the body and the auth challenge say, and the fix when there is an obvious one."""
    status = response.status_code
    try:
        body: Any = response.json()
    except ValueError:
        body = None
    rpc_error = body.get("error") if isinstance(body, dict) else None
    if isinstance(rpc_error, dict) and status not in (401, 403):
        return RpcError(rpc_error, status)
    said = (
        one_line(str(rpc_error.get("message", "")), 200) if isinstance(rpc_error, dict) else _said(body, response.text)
    )
    reason = response.reason_phrase
    if said.lower() == reason.lower() or said.lower().startswith(reason.lower() + ":"):
        said = said[len(reason) + 1 :].strip()  # "Unauthorized: the token has expired" after "HTTP 401 Unauthorized"
    head = f"HTTP {status} {reason}".rstrip()
    challenge = challenge_of(response, body)
    if status == 401:
        detail = param(challenge, "error_description") or said
        if authorization is not None:
            return Unauthorized(f"{head}: the credentials were refused{': ' + detail if detail else ''}", challenge)
        if param(challenge, "resource_metadata"):  # OAuth (RFC 9728): a browser sign-in can get a token
            return Unauthorized(f"{head}: the server wants a sign-in (pass --login, or --bearer TOKEN)", challenge)
        return Unauthorized(
            f"{head}: the server wants credentials (pass --bearer TOKEN, or --sigv4 for IAM)", challenge
        )
    if status == 403:
        return RemoteFailure(
            f"{head}: {said or 'forbidden'}{_forbidden_hint(response, said, authorization, challenge)}"
        )
    if status == 404:
        return RemoteFailure(f"{head}: nothing at {response.request.url} (is it the MCP endpoint, e.g. .../mcp?)")
    return RemoteFailure(f"{head}{': ' + said if said else ''}")


def _forbidden_hint(response: httpx.Response, said: str, authorization: str | None, challenge: str) -> str:
    """The likely fix for a 403: the REST API's stage, SigV4, or the token's missing scope."""
    url = response.request.url
    if (authorization or "").startswith("AWS4-"):
        return " (the signature was refused: check --region, --service and the AWS credentials)"
    if "missing authentication token" in said.lower() and url.path.strip("/").count("/") == 0:
        # API Gateway's answer for a path no route matches: a REST API URL without its stage, most often
        staged = str(url.copy_with(path=f"/{REST_STAGE}{url.path}", query=None))
        return (
            f" (the usual cause: a REST API URL without its stage; try {staged}, template.yaml's stage;"
            " if the endpoint uses IAM auth, pass --sigv4)"
        )
    if any(word in said.lower() for word in ("authentication token", "signature", "security token")):
        return " (an IAM-authenticated endpoint: pass --sigv4, with --region if the host does not name it)"
    if param(challenge, "error") == "insufficient_scope" and param(challenge, "scope"):
        return f" (the token needs scope {param(challenge, 'scope')})"
    return ""


def _said(body: Any, text: str) -> str:
    if isinstance(body, dict):
        for key in ("message", "Message", "error_description", "error"):
            if isinstance(body.get(key), str):
                return one_line(body[key], 200)
    return one_line(text, 200)


def param(challenge: str, key: str) -> str:
    """A quoted parameter of a `WWW-Authenticate` challenge (`error`, `scope`, ...), or ""."""
    found = re.search(rf'(?:^|[\s,]){key}="([^"]*)"', challenge)
    return found.group(1) if found else ""
