"""What the facade fuzzer checks, per exchange: no 5xx and no exception escaping the app ("5xx"); no
exception the facade logged with a traceback ("internal"); no traceback, exception class name or source
path the request did not carry itself ("leak", `properties.leaks`); no response header holding CR, LF
or NUL, none but `Location` echoing made-up text, and at most 8 KB of them besides `Location`
("header"); HTML pages without an injected `<script` or attribute breakout ("html"); RFC 6749 JSON
errors (an `error` string) for 4xx on `/oauth/register`, `/oauth/token` and `/oauth/revoke`, and
well-formed 201 / 200 answers from the first two ("shape"); redirects only to a redirect URI a client
registered or declared, to the upstream, or to the facade itself ("redirect"); keys the DynamoDB facade
store could write ("storage-key"); an answer within `ANSWER_SECONDS` ("hang"); no credential the request
presented (a client assertion, an ID-JAG, a DPoP proof, an access or refresh token) and no client secret
or its hash in an answer ("secret").

Identity for agents adds to "shape": a DPoP-bound token (`token_type` `DPoP`) only for a request that sent
a proof, no refresh token from a machine grant, a `DPoP-Nonce` with every `use_dpop_nonce`, a challenge
with every 401 from `/mcp`, and an authorization server metadata document naming its own endpoints.
The one 5xx that is not a finding is the documented 503 `temporarily_unavailable` of a probe aimed at a
dependency the target keeps down (`FacadeProbe.unavailable`: an IdP's or a client's keys).

`run_facade_probe` sends one probe and returns what every property found; the tests
(`test_facade_fuzz.py`) and the long run (`bench/facade_fuzz.py`) share it.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from http.cookies import CookieError, SimpleCookie
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, urlsplit

from .auth_probes import TAINT
from .properties import MAX_HEADER_BYTES, categories_of, leaks, signature
from .targets import Finding, Outcome

if TYPE_CHECKING:
    from .facade_probes import FacadeProbe
    from .facade_target import FacadeTarget

CATEGORIES = ("5xx", "internal", "leak", "header", "html", "shape", "redirect", "storage-key", "hang", "secret")
ANSWER_SECONDS = 8.0
"""The longest an answer may take (a metadata document's fetch is cut at 5 s)."""
UPSTREAM = "https://idp.example/"
OWN = "127.0.0.1:8000"
"""The facade's own authority (the router redirects `/path/` to `/path` there)."""
JSON_ROUTES = ("/oauth/register", "/oauth/token", "/oauth/revoke")
ANSWERS = {"/oauth/register": ("client_id", "redirect_uris"), "/oauth/token": ("access_token", "token_type")}
BREAKOUTS = ("<script", '"' + TAINT, "'" + TAINT, "<" + TAINT)
"""In an HTML page, each is an injection that escaped the escaping (the pages have no scripts)."""


@dataclass
class FacadeOutcome(Outcome):
    """An `Outcome` of a facade route: its path and family, the cookies it set, and where it may
    redirect (the authorities of every redirect URI a client registered or declared)."""

    path: str = ""
    family: str = ""
    target: str = ""
    cookies: list[str] = field(default_factory=list)
    browser: str | None = None
    """The `lmcp_browser` cookie the request carried (the first, as the facade reads it)."""
    redirect_authorities: frozenset[tuple[str, str]] = frozenset()
    secrets: list[str] = field(default_factory=list)
    """Credentials the request presented or the target holds: never in an answer."""
    unavailable: bool = False
    """The probe was aimed at a dependency the target keeps down (a 503 `temporarily_unavailable` is due)."""


def run_facade_probe(target: FacadeTarget, probe: FacadeProbe) -> tuple[FacadeOutcome, list[Finding]]:
    """Send one probe and check every property; the findings are empty when all hold."""
    outcome = target.send(probe)
    return outcome, check(outcome)


def check(outcome: FacadeOutcome) -> list[Finding]:
    findings = [Finding("5xx", f"escaped the app: {text}") for text in outcome.escaped]
    findings += [Finding("internal", f"logged: {text}") for text in outcome.logged]
    findings += [Finding("storage-key", text) for text in outcome.key_problems]
    if outcome.status is None or outcome.elapsed > ANSWER_SECONDS:
        findings.append(Finding("hang", f"no answer within {ANSWER_SECONDS:.0f} s ({outcome.elapsed:.1f} s)"))
    if outcome.status is None:
        return findings
    if outcome.status >= 500 and not deliberate(outcome):
        findings.append(Finding("5xx", f"HTTP {outcome.status} on {outcome.path}"))
    findings += [Finding("header", text) for text in header_rules(outcome)]
    findings += [Finding("leak", text) for text in leaks(outcome)]
    findings += [Finding("html", text) for text in html_rules(outcome)]
    findings += [Finding("shape", text) for text in shape_rules(outcome)]
    findings += [Finding("redirect", text) for text in redirect_rules(outcome)]
    findings += [Finding("shape", text) for text in agent_rules(outcome)]
    findings += [Finding("secret", text) for text in secret_rules(outcome)]
    return findings


def json_body(outcome: FacadeOutcome) -> Any:
    try:
        return json.loads(outcome.body)
    except (ValueError, RecursionError):
        return None


def deliberate(outcome: FacadeOutcome) -> bool:
    """The facade's documented 503: JSON `temporarily_unavailable` from the token endpoint, to a probe
    aimed at a dependency the target keeps down."""
    document = json_body(outcome)
    return (
        outcome.unavailable
        and outcome.status == 503
        and outcome.path == "/oauth/token"
        and isinstance(document, dict)
        and document.get("error") == "temporarily_unavailable"
    )


def secret_rules(outcome: FacadeOutcome) -> list[str]:
    """No credential of the request, client secret or secret hash in the answer's body or headers (a
    signature alone counts: it is what makes a JWT usable)."""
    answer = outcome.body.decode("utf-8", "replace") + "\n" + json.dumps(outcome.headers) + str(outcome.cookies)
    found = []
    for secret in dict.fromkeys(outcome.secrets):
        pieces = [secret, secret.rsplit(".", 1)[-1]] if secret.count(".") >= 2 else [secret]
        for piece in pieces:
            if len(piece) >= 16 and piece in answer:
                at = answer.find(piece)
                found.append(f"the answer holds a credential: {answer[max(0, at - 60) : at + 60]!r}")
                break
    return found


MACHINE_GRANTS = ("client_credentials", "urn:ietf:params:oauth:grant-type:jwt-bearer")
AS_METADATA = ("/.well-known/oauth-authorization-server", "/.well-known/openid-configuration")


def agent_rules(outcome: FacadeOutcome) -> list[str]:
    """The shape of DPoP and machine-grant answers, and of the authorization server's metadata."""
    status, document = outcome.status or 0, json_body(outcome)
    sent = {name.lower() for name in outcome.request_headers}
    found = []
    if outcome.path == "/oauth/token" and status == 200 and isinstance(document, dict):
        if document.get("token_type") not in ("Bearer", "DPoP"):
            found.append(f"token_type is {document.get('token_type')!r}")
        if document.get("token_type") == "DPoP" and "dpop" not in sent:
            found.append("a DPoP-bound token for a request without a DPoP proof")
        fields = parse_qs(outcome.request_body.decode("utf-8", "replace"))
        if fields.get("grant_type", [""])[0] in MACHINE_GRANTS and "refresh_token" in document:
            found.append("a machine grant answered with a refresh token")
    nonce = outcome.headers.get("dpop-nonce")
    if isinstance(document, dict) and document.get("error") == "use_dpop_nonce" and not nonce:
        found.append(f"use_dpop_nonce on {outcome.path} without a DPoP-Nonce header")
    if outcome.path == "/mcp" and status == 401:
        challenge = outcome.headers.get("www-authenticate", "")
        if not re.match(r"(Bearer|DPoP)\b", challenge):
            found.append(f"a 401 on /mcp challenges {challenge[:200]!r}")
        elif 'error="use_dpop_nonce"' in challenge and not outcome.headers.get("dpop-nonce"):
            found.append("use_dpop_nonce on /mcp without a DPoP-Nonce header")
    if outcome.path in AS_METADATA and outcome.method == "GET" and status == 200:
        found += metadata_rules(document)
    return found


def metadata_rules(document: Any) -> list[str]:
    """RFC 8414: a JSON object naming its issuer, every endpoint under it, and lists of strings."""
    if not isinstance(document, dict) or not isinstance(document.get("issuer"), str):
        return [f"the metadata is not an object with an issuer: {str(document)[:200]!r}"]
    issuer = document["issuer"]
    found = []
    for name, value in document.items():
        if (name.endswith("_endpoint") or name == "jwks_uri") and not str(value).startswith(issuer + "/"):
            found.append(f"the metadata's {name} {value!r} is not under its issuer")
        if name.endswith("_supported") and isinstance(value, list) and not all(isinstance(v, str) for v in value):
            found.append(f"the metadata's {name} holds a non-string")
    return found


def header_rules(outcome: FacadeOutcome) -> list[str]:
    """No CR, LF or NUL in a header or cookie; made-up text only in `Location` (which carries the
    client's own `state` and redirect URI back to it) and in the renewal of the browser cookie the
    request carried (`lmcp_browser`: the browser's own value); at most 8 KB of headers besides `Location`."""
    found = []
    pairs = [*outcome.headers.items(), *(("set-cookie", cookie) for cookie in outcome.cookies)]
    for name, value in pairs:
        if re.search(r"[\r\n\x00]", name + value):
            found.append(f"the {name} header holds CR, LF or NUL: {value[:200]!r}")
        if TAINT in value and name != "location" and not renews(value, outcome.browser):
            found.append(f"the {name} header echoes request input: {value[:200]!r}")
    size = sum(len(name) + len(value) + 4 for name, value in pairs if name != "location")
    if size > MAX_HEADER_BYTES:
        found.append(f"response headers take {size} bytes (over {MAX_HEADER_BYTES})")
    return found


def renews(set_cookie: str, browser: str | None) -> bool:
    """Whether a Set-Cookie renews the browser cookie with the value the request carried."""
    try:
        morsel = SimpleCookie(set_cookie).get("lmcp_browser")
    except CookieError:
        return False
    return browser is not None and morsel is not None and morsel.value == browser


def html_rules(outcome: FacadeOutcome) -> list[str]:
    if not outcome.headers.get("content-type", "").startswith("text/html"):
        return []
    page = outcome.body.decode("utf-8", "replace")
    found = []
    for marker in BREAKOUTS:
        at = page.lower().find(marker.lower())
        if at >= 0:
            found.append(f"an HTML page holds {marker!r} unescaped: {page[max(0, at - 80) : at + 80]!r}")
    return found


def shape_rules(outcome: FacadeOutcome) -> list[str]:
    """RFC 6749 / 7591 JSON on the JSON routes (POST only: another method is the router's 405; a 5xx is
    a finding of its own): an `error` string on a 4xx, a client or tokens on a 201 or 200."""
    status = outcome.status or 0
    if outcome.path not in JSON_ROUTES or outcome.method != "POST" or status >= 500 or status in (404, 405):
        return []  # 404, 405: the router's (a facade without revocation answers 404)
    if outcome.path == "/oauth/revoke" and status < 400:
        return []  # RFC 7009: a 200 says nothing
    try:
        document = json.loads(outcome.body)
    except (ValueError, RecursionError):
        document = None
    content_type = outcome.headers.get("content-type", "")
    if not isinstance(document, dict) or not content_type.startswith("application/json"):
        return [f"HTTP {status} on {outcome.path} is not a JSON object: {outcome.body[:200]!r}"]
    if 400 <= status < 500:
        if not isinstance(document.get("error"), str) or not document["error"]:
            return [f"a {status} on {outcome.path} has no `error` string: {outcome.body[:200]!r}"]
        if not isinstance(document.get("error_description", ""), str):
            return [f"a {status} on {outcome.path} has a non-string error_description"]
        if status == 401 and "www-authenticate" not in outcome.headers:
            return [f"a 401 on {outcome.path} has no WWW-Authenticate"]
        return []
    missing = [name for name in ANSWERS[outcome.path] if name not in document]
    if status in (200, 201) and missing:
        return [f"a {status} on {outcome.path} lacks {missing}: {outcome.body[:200]!r}"]
    return []


def authority(uri: str) -> tuple[str, str] | None:
    """(scheme, host) of a URI: where a redirect goes, whatever the port (a loopback redirect URI matches
    on any port, RFC 8252 §7.3)."""
    try:
        parts = urlsplit(uri)
        host = parts.hostname or parts.netloc
    except ValueError:
        return None
    return parts.scheme.lower(), host.lower()


def redirect_rules(outcome: FacadeOutcome) -> list[str]:
    """A redirect goes to the upstream, or to a redirect URI some client registered or declared."""
    location = outcome.headers.get("location")
    if location is None or not 300 <= (outcome.status or 0) < 400:
        return []
    if location.startswith(UPSTREAM):
        return []
    if urlsplit(location).netloc == OWN:  # the router's own: a trailing slash taken off
        return []
    if authority(location) in outcome.redirect_authorities:
        return []
    return [f"redirects to {location[:200]!r}, no client's redirect URI"]


# -- tallies for the long run ---------------------------------------------------------------------
@dataclass
class Seen:
    count: int
    families: set[str]
    text: str
    probe: Any


@dataclass
class FacadeTally:
    """Examples, statuses and findings per family, and every distinct finding with its first example."""

    examples: dict[str, int] = field(default_factory=dict)
    statuses: dict[str, dict[int, int]] = field(default_factory=dict)
    findings: dict[str, int] = field(default_factory=lambda: dict.fromkeys(CATEGORIES, 0))
    per_family: dict[str, dict[str, int]] = field(default_factory=dict)
    distinct: dict[str, Seen] = field(default_factory=dict)
    deliberate: int = 0
    """The documented 503s (`temporarily_unavailable` for a dependency the target keeps down)."""

    def add(self, probe: FacadeProbe, outcome: FacadeOutcome, findings: list[Finding]) -> None:
        family = f"{outcome.target}/{probe.family}"
        self.deliberate += outcome.status is not None and outcome.status >= 500 and deliberate(outcome)
        self.examples[family] = self.examples.get(family, 0) + 1
        statuses = self.statuses.setdefault(family, {})
        statuses[outcome.status or 0] = statuses.get(outcome.status or 0, 0) + 1
        row = self.per_family.setdefault(family, {})
        for category in categories_of(findings):
            row[category] = row.get(category, 0) + 1
        for finding in findings:
            self.findings[finding.category] = self.findings.get(finding.category, 0) + 1
            key = signature(finding)
            if key in self.distinct:
                self.distinct[key].count += 1
                self.distinct[key].families.add(family)
            else:
                self.distinct[key] = Seen(1, {family}, describe(outcome, [finding]), probe)


def describe(outcome: FacadeOutcome, findings: list[Finding]) -> str:
    """A failure message: what was found, the request as sent, and the answer."""
    lines = [f"{finding.category}: {finding.detail}" for finding in findings]
    lines.append(f"sent {outcome.method} {outcome.path}{outcome.request_headers.get(':query', '')}")
    shown = {k: v[:300] for k, v in outcome.request_headers.items() if k not in (":query", ":decoded", ":document")}
    lines.append(f"headers {json.dumps(shown)[:900]}")
    lines.append(f"body {outcome.request_body[:600]!r}")
    if ":document" in outcome.request_headers:
        lines.append(f"document {outcome.request_headers[':document'][:600]!r}")
    lines.append(f"got {outcome.status} {json.dumps(outcome.headers)[:400]}")
    lines.append(f"body {outcome.body[:600]!r}")
    return "\n".join(lines)
