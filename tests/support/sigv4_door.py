"""A SigV4-checking front door on 127.0.0.1, standing in for an IAM-authenticated API Gateway or
Function URL: it recomputes each request's AWS Signature Version 4 with botocore, for the fake
credentials the tests export (`testing`/`testing`), and forwards the request to its upstream only when
the `Authorization` header matches; anything else is answered 403 the way API Gateway does.

Checked: the algorithm, the credential scope (key id, date, region, service), that `host` and
`x-amz-date` are signed, that the date is within five minutes, that a sent `x-amz-content-sha256` is
the body's, and the signature itself over the method, path, query, signed headers and body. Responses
are relayed as they arrive (an SSE stream stays a stream). `accepted` and `refused` count what it saw.
"""

from __future__ import annotations

import datetime
import hashlib
import hmac
import http.client
import json
import re
import threading
from http.server import BaseHTTPRequestHandler
from urllib.parse import urlsplit

from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

from .loopback import LoopbackServer, respond

_HOP_BY_HOP = {"connection", "keep-alive", "transfer-encoding", "content-length", "host"}
_AUTHORIZATION = re.compile(
    r"^AWS4-HMAC-SHA256 Credential=(?P<key>[^/]+)/(?P<date>\d{8})/(?P<region>[^/]+)/(?P<service>[^/]+)/aws4_request,"
    r" ?SignedHeaders=(?P<signed>[a-z0-9;-]+), ?Signature=(?P<signature>[0-9a-f]{64})$"
)


class SigV4Door:
    def __init__(
        self,
        upstream: str,
        *,
        region: str = "us-east-1",
        service: str = "execute-api",
        credentials: Credentials | None = None,
    ) -> None:
        parts = urlsplit(upstream)
        self.upstream = (parts.hostname or "127.0.0.1", parts.port or 80)
        self.region = region
        self.service = service
        self.credentials = credentials or Credentials("testing", "testing", "testing")
        # HTTP/1.0: one request per connection, so a relayed stream ends with it
        self._server = LoopbackServer(self._handle, ("POST", "GET", "DELETE"))
        self.port = self._server.port
        self.origin = f"http://127.0.0.1:{self.port}"
        self.accepted = 0
        self.refused: list[str] = []
        """Why each refused request was refused."""
        self._lock = threading.Lock()

    def stop(self) -> None:
        self._server.stop()

    # -- checking ----------------------------------------------------------------------------------
    def problem(self, method: str, path: str, headers: dict[str, str], body: bytes) -> str | None:
        """Why this request's signature is not valid for the door's credentials, or None if it is.
        `headers` have lower-case names."""
        found = _AUTHORIZATION.match(headers.get("authorization", ""))
        if found is None:
            return "no SigV4 Authorization header"
        scope = (found["key"], found["region"], found["service"])
        if scope != (self.credentials.access_key, self.region, self.service):
            return f"wrong credential scope {'/'.join(scope)}"
        stamp = headers.get("x-amz-date", "")
        try:
            signed_at = datetime.datetime.strptime(stamp, "%Y%m%dT%H%M%SZ").replace(tzinfo=datetime.UTC)
        except ValueError:
            return "no valid x-amz-date"
        if abs((datetime.datetime.now(datetime.UTC) - signed_at).total_seconds()) > 300 or found["date"] != stamp[:8]:
            return "signature expired or dated wrongly"
        signed = found["signed"].split(";")
        if not {"host", "x-amz-date"} <= set(signed) or any(name not in headers for name in signed):
            return "host and x-amz-date must be signed, and every signed header sent"
        claimed = headers.get("x-amz-content-sha256")
        if claimed is not None and claimed != hashlib.sha256(body).hexdigest():
            return "x-amz-content-sha256 is not the body's hash"
        request = AWSRequest(
            method=method, url=f"http://{headers['host']}{path}", data=body, headers={n: headers[n] for n in signed}
        )
        request.context["timestamp"] = stamp
        auth = SigV4Auth(self.credentials, self.service, self.region)
        expected = auth.signature(auth.string_to_sign(request, auth.canonical_request(request)), request)
        if not hmac.compare_digest(expected, found["signature"]):
            return "signature does not match"
        return None

    # -- relaying ----------------------------------------------------------------------------------
    def _handle(self, handler: BaseHTTPRequestHandler) -> None:
        length = int(handler.headers.get("content-length") or 0)
        body = handler.rfile.read(length) if length else b""
        headers = {name.lower(): value for name, value in handler.headers.items()}
        problem = self.problem(handler.command, handler.path, headers, body)
        with self._lock:
            if problem is None:
                self.accepted += 1
            else:
                self.refused.append(problem)
        if problem is not None:
            answer = json.dumps({"message": f"The request signature we calculated does not match ({problem})"})
            respond(handler, 403, answer.encode(), headers=[("x-amzn-errortype", "InvalidSignatureException")])
            return
        connection = http.client.HTTPConnection(*self.upstream, timeout=120)
        try:
            forwarded = {k: v for k, v in handler.headers.items() if k.lower() not in _HOP_BY_HOP}
            forwarded["Host"] = f"{self.upstream[0]}:{self.upstream[1]}"
            connection.request(handler.command, handler.path, body=body, headers=forwarded)
            response = connection.getresponse()
            handler.send_response(response.status)
            for name, value in response.getheaders():
                if name.lower() not in _HOP_BY_HOP:
                    handler.send_header(name, value)
            handler.end_headers()
            while chunk := response.read1(65536):
                handler.wfile.write(chunk)
                handler.wfile.flush()
        finally:
            connection.close()
