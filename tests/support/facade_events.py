"""A browser for the authorization facade's tests that drive the Lambda handler in process: each request
becomes the event its front door sends (an HTTP API or Function URL: payload 2.0, the browser's cookies
in the event's `cookies` list, Set-Cookie back in the response's `cookies`; a REST API: payload 1.0, the
stage in every path, cookies in the headers), from the source address the test chooses."""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass, field
from http.cookies import SimpleCookie
from typing import Any
from urllib.parse import urlencode

from lambda_mcp.local.context import LambdaContext
from lambda_mcp.local.gateways import Call, http_api_event, rest_api_event

DOMAIN = "abc123.execute-api.us-east-1.amazonaws.com"


@dataclass
class Browser:
    """Sends requests as `api`'s events to the handler and keeps the cookies it is given, as a browser would."""

    api: str
    handler: Any
    cookies: dict[str, str] = field(default_factory=dict)
    source_ip: str = "127.0.0.1"
    """The address the front door reports the request from (`requestContext`'s `sourceIp`)."""

    @property
    def base(self) -> str:
        return f"https://{DOMAIN}" + ("/v1" if self.api == "rest" else "")

    def request(
        self,
        method: str,
        path: str,
        params: dict[str, str] | None = None,
        form: Any = None,
        document: Any = None,
        headers: dict[str, str] | None = None,
    ) -> dict[str, Any]:
        target = path + (f"?{urlencode(params)}" if params else "")
        headers = {"host": DOMAIN, **(headers or {})}
        body = b""
        if form is not None:
            body, headers["content-type"] = urlencode(form).encode(), "application/x-www-form-urlencoded"
        if document is not None:
            body, headers["content-type"] = json.dumps(document).encode(), "application/json"
        cookie = "; ".join(f"{k}={v}" for k, v in self.cookies.items())
        if self.api == "rest":
            if cookie:
                headers["cookie"] = cookie
            event = rest_api_event(Call(method, f"/v1{target}", headers, body, DOMAIN), path, None)
            event["requestContext"]["identity"]["sourceIp"] = self.source_ip
        else:
            event = http_api_event(method, target, headers, body, DOMAIN)
            if cookie:
                event["cookies"] = [f"{k}={v}" for k, v in self.cookies.items()]  # as API Gateway sends them
            event["requestContext"]["http"]["sourceIp"] = self.source_ip
        response: dict[str, Any] = self.handler(event, LambdaContext())
        set_cookies = response.get("cookies") or []
        multi = {k.lower(): v for k, v in (response.get("multiValueHeaders") or {}).items()}
        single = {k.lower(): v for k, v in (response.get("headers") or {}).items()}
        set_cookies += multi.get("set-cookie", []) or ([single["set-cookie"]] if "set-cookie" in single else [])
        for header in set_cookies:
            for name, morsel in SimpleCookie(header).items():
                self.cookies[name] = morsel.value
        return response

    def header(self, response: dict[str, Any], name: str) -> str | None:
        headers = {k.lower(): v for k, v in (response.get("headers") or {}).items()}
        multi = {k.lower(): v[0] for k, v in (response.get("multiValueHeaders") or {}).items()}
        found: str | None = headers.get(name) or multi.get(name)
        return found

    def location(self, response: dict[str, Any]) -> str:
        headers = {k.lower(): v for k, v in (response.get("headers") or {}).items()}
        multi = {k.lower(): v[0] for k, v in (response.get("multiValueHeaders") or {}).items()}
        found: str = headers.get("location") or multi["location"]
        return found


def _body(response: dict[str, Any]) -> str:
    raw = response.get("body") or ""
    return base64.b64decode(raw).decode() if response.get("isBase64Encoded") else str(raw)


def body_of(response: dict[str, Any]) -> str:
    raw = response.get("body") or ""
    return base64.b64decode(raw).decode() if response.get("isBase64Encoded") else str(raw)
