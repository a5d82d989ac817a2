"""Fetch the authorization server's JSON documents (metadata, JWKS): small, bounded, https only.

Plain `urllib` keeps this off every import path but `jwt` mode's; calls block, so the validator runs
them in a worker thread. `http://` is accepted only for loopback issuers (local work).
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from ..config import secure_url

TIMEOUT_SECONDS = 5.0
MAX_BYTES = 512 * 1024


class FetchError(Exception):
    """The document could not be fetched or is not a JSON object (the message says which URL, and why)."""


def fetch_json(url: str) -> dict[str, Any]:
    if not secure_url(url):
        raise FetchError(f"refusing to fetch {url}: https:// is required (http:// only on loopback)")
    request = urllib.request.Request(url, headers={"Accept": "application/json", "User-Agent": "lambda-mcp"})
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT_SECONDS) as response:  # noqa: S310 (scheme checked)
            body = response.read(MAX_BYTES + 1)
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


def issuer_metadata(issuer: str) -> dict[str, Any]:
    """The first metadata document that names `issuer` as its issuer (RFC 8414 §3.3)."""
    problems: list[str] = []
    for url in metadata_urls(issuer):
        try:
            document = fetch_json(url)
        except FetchError as exc:
            problems.append(str(exc))
            continue
        if document.get("issuer") != issuer:
            problems.append(f"{url} names issuer {document.get('issuer')!r}, not {issuer!r}")
            continue
        return document
    raise FetchError("no usable authorization server metadata: " + "; ".join(problems))
