"""Fetch the authorization server's JSON documents (metadata, JWKS): small, bounded in time, https only.

Plain `urllib` keeps this off every import path but the auth modes'; calls block, so callers run them
in a worker thread. `http://` is accepted only for loopback issuers (local work). A redirect is
followed only to a URL that passes the same rule, never from `https://` down to `http://`, and at most
`MAX_REDIRECTS` times. Every fetch of one discovery shares one `Deadline`.
"""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from http.client import HTTPMessage
from typing import IO, Any
from urllib.parse import urlsplit, urlunsplit

from ..config import secure_url

MAX_BYTES = 512 * 1024
MAX_REDIRECTS = 3


class FetchError(Exception):
    """The document could not be fetched or is not a JSON object (the message says which URL, and why)."""


class Deadline:
    """When a discovery (metadata, then keys) must be done: every fetch gets the time that is left."""

    def __init__(self, seconds: float, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._end = clock() + seconds

    def remaining(self) -> float:
        return self._end - self._clock()

    def check(self, url: str) -> float:
        """The seconds left for fetching `url`; raises `FetchError` when none are."""
        left = self.remaining()
        if left <= 0.05:
            raise FetchError(f"gave up on {url}: the discovery deadline passed")
        return left


def allowed_redirect(source: str, target: str) -> bool:
    """Whether a fetch of `source` may follow a redirect to `target`: the target passes the https (or
    loopback http) rule, and an `https://` source never goes down to `http://`."""
    if not secure_url(target):
        return False
    return not (urlsplit(source).scheme == "https" and urlsplit(target).scheme != "https")


class _CheckedRedirects(urllib.request.HTTPRedirectHandler):
    max_redirections = MAX_REDIRECTS

    def redirect_request(
        self, req: urllib.request.Request, fp: IO[bytes], code: int, msg: str, headers: HTTPMessage, newurl: str
    ) -> urllib.request.Request | None:
        if not allowed_redirect(req.full_url, newurl):
            raise FetchError(f"refusing the redirect of {req.full_url} to {newurl}: https:// is required")
        return super().redirect_request(req, fp, code, msg, headers, newurl)


_OPENER = urllib.request.build_opener(_CheckedRedirects)


def fetch_json(url: str, deadline: Deadline | None = None) -> dict[str, Any]:
    if not secure_url(url):
        raise FetchError(f"refusing to fetch {url}: https:// is required (http:// only on loopback)")
    timeout = (deadline or Deadline(5.0)).check(url)
    request = urllib.request.Request(url, headers={"Accept": "application/json", "User-Agent": "lambda-mcp"})
    try:
        with _OPENER.open(request, timeout=timeout) as response:
            body = response.read(MAX_BYTES + 1)
    except FetchError:
        raise
    except (urllib.error.URLError, OSError, ValueError) as exc:
        raise FetchError(f"could not fetch {url}: {exc}") from None
    if len(body) > MAX_BYTES:
        raise FetchError(f"{url} is larger than {MAX_BYTES} bytes")
    try:
        document = json.loads(body)
    except ValueError:
        raise FetchError(f"{url} is not JSON") from None
    if not isinstance(document, dict):
        raise FetchError(f"{url} is not a JSON object")
    return document


def metadata_urls(issuer: str) -> list[str]:
    """Where an issuer's metadata may be: OpenID discovery (path appended), then RFC 8414 (well-known
    inserted before the path), then OpenID discovery with the well-known inserted (as RFC 8414 §5)."""
    parts = urlsplit(issuer)
    path = parts.path.rstrip("/")

    def at(new_path: str) -> str:
        return urlunsplit((parts.scheme, parts.netloc, new_path, "", ""))

    urls = [
        at(f"{path}/.well-known/openid-configuration"),
        at(f"/.well-known/oauth-authorization-server{path}"),
        at(f"/.well-known/openid-configuration{path}"),
    ]
    return list(dict.fromkeys(urls))


def issuer_metadata(issuer: str, deadline: Deadline | None = None) -> dict[str, Any]:
    """The first metadata document that names `issuer` as its issuer (RFC 8414 §3.3), all tries within
    one deadline."""
    deadline = deadline or Deadline(5.0)
    problems: list[str] = []
    for url in metadata_urls(issuer):
        try:
            document = fetch_json(url, deadline)
        except FetchError as exc:
            problems.append(str(exc))
            if deadline.remaining() <= 0.05:
                break
            continue
        if document.get("issuer") != issuer:
            problems.append(f"{url} names issuer {document.get('issuer')!r}, not {issuer!r}")
            continue
        return document
    raise FetchError("no usable authorization server metadata: " + "; ".join(problems))
