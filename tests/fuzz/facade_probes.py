"""What the facade fuzzer sends: hostile but well-aimed requests for the authorization facade's routes
(`LAMBDA_MCP_AUTH=proxy`), as target-independent `FacadeProbe`s, one family per route.

- `register`: `POST /oauth/register` with client metadata that is valid-looking with a mutated field, of
  the wrong types, deeply nested under the 8 KB cap, with huge numbers, confusable hosts, control
  characters, odd schemes and ports in its redirect URIs, duplicate keys, not JSON, or of another type.
- `cimd`: `GET /oauth/authorize?client_id=<url>` where the URL names a hostile Client ID Metadata
  Document (`Document`) that the target serves on loopback, or is itself malformed.
- `authorize`, `consent`, `callback`, `token`, `revoke`: the browser flow and the grants, with hostile
  query strings, urlencoded bodies, cookies and Basic credentials around real values.
- `machine`, `dpop`, `metadata` (`agent_probes`): identity for agents.

Values only the running facade knows are `Ref`s the target fills in, possibly damaged (`probes.mangle`):
`client_id`, `secret`, `basic` (its Basic credentials) and `redirect` of the probe's registered client;
`txn` (of a fresh consent page) and `browser` (the cookie it is bound to); `state` (the upstream's, after
an approval); `remembered-state` (after a remembered consent sent the browser straight on);
`confirm-txn` (the consent page shown again to a user the remembered one is not); `code` and its
`verifier`; `refresh`; `spent-txn`, `spent-code`, `spent-refresh` (used once already); `consent` (a real
consent cookie); `document` (the URL the probe's metadata document is served at).
Each part is right most of the time and wrong sometimes, so shrinking goes back to a valid request
with one fault. Made-up text carries `TAINT` (`auth_probes`), so the properties can tell an echo.
"""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass
from typing import Any

from hypothesis import strategies as st

from .auth_probes import TAINT, tainted
from .probes import Draw, Json, Raw, Ref, huge_numbers, json_values, pick, real, surrogates, weighted, words

BASE = "http://127.0.0.1:8000"
RESOURCE = BASE + "/mcp"
REDIRECT = "http://127.0.0.1:9999/callback"
SCOPES = ("mcp:tools", "inventory:read", "inventory:write")
"""What the target's facade offers (`LAMBDA_MCP_AUTH_SCOPES`)."""
SELF = "@@DOCUMENT-URL@@"
"""In a `Document`'s body: replaced by the URL the document is fetched at (JSON-escaped)."""
PORT = "@@PORT@@"
"""In a client id URL: replaced by the document server's port."""
PATH = "@@PATH@@"
"""In a client id URL: replaced by the document's path on the document server."""
CLIENTS = ("public", "basic", "post", "web", "widest")
"""The target's registered clients: `public` (auth method none), `basic` and `post` (confidential), all
three redirecting to loopback; `web` (public, an `https` redirect URI: the only kind a consent is
remembered for) and `widest` (the same with the longest redirect URI registration accepts)."""
FAMILIES = ("register", "cimd", "authorize", "consent", "callback", "token", "revoke")
"""The browser flow's and DCR's families; `agent_probes.FAMILIES` adds the machine grants, DPoP and the
metadata document."""


# -- probes -------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Form:
    """An urlencoded body: `pairs` in order (a name may repeat), values possibly `Ref`s."""

    pairs: tuple[tuple[str, Any], ...]


@dataclass(frozen=True)
class Document:
    """What the document server answers for this probe's document: `SELF` in `body` is its URL."""

    status: int
    headers: tuple[tuple[str, str], ...]
    body: bytes


@dataclass(frozen=True)
class FacadeProbe:
    """One request to a facade route. `query` pairs are urlencoded and `raw_query` appended as is;
    `body` is raw bytes (`Raw`), a `Form`, or a JSON tree; `client` names the registered client whose
    values the `Ref`s take; `document`, when set, is served at the URL `client_url` names."""

    family: str
    method: str
    path: str
    query: tuple[tuple[str, Any], ...] = ()
    raw_query: str = ""
    headers: tuple[tuple[str, Any], ...] = ()
    cookies: tuple[tuple[str, Any], ...] = ()
    body: Any = b""
    client: str = "public"
    document: Document | None = None
    client_url: str = ""
    repeat: bool = False
    """Sent twice, the second exchange checked (a replay of every assertion, ID-JAG and proof in it)."""
    unavailable: bool = False
    """Aimed at a dependency the target keeps down (an IdP's or a client's keys): a 503
    `temporarily_unavailable` is the documented answer, not a finding."""


# -- hostile text -------------------------------------------------------------------------------
CONTROLS = ("\t", "\r\n", "\n", "\r", "\x00", "\x0b", "\x1b", "\x7f", "\u0085", "\u2028", "\ufeff", "\u202e", " ")
MARKUP = (
    "<script>alert(1)</script>" + TAINT,
    '"><script>' + TAINT,
    '"' + TAINT,
    "'" + TAINT,
    "<" + TAINT + ">",
    "\r\nSet-Cookie: x=" + TAINT,
    "\r\nLocation: https://evil.example/" + TAINT,
    "%0d%0aSet-Cookie:%20x=" + TAINT,
    "Traceback (most recent call last): KeyError: " + TAINT,
)
"""Injections: script and attribute breakouts (HTML), header splits (CR/LF, raw and encoded), and text
that looks like an internal error (an echo of it is not a leak)."""


@st.composite
def hostile_text(draw: Draw) -> str:
    """Made-up text: tainted, a markup or header injection, long, non-ASCII, control characters, empty."""
    kind = weighted(draw, [("taint", 4), ("markup", 3), ("control", 2), ("long", 1), ("wide", 1), ("empty", 1)])
    if kind == "markup":
        return str(draw(st.sampled_from(MARKUP)))
    if kind == "control":
        return tainted(draw, 6) + str(draw(st.sampled_from(CONTROLS))) + TAINT
    if kind == "long":
        return TAINT + "a" * int(draw(st.sampled_from([1000, 1024, 1025, 2048, 2049, 5000, 12_000])))
    if kind == "wide":  # escapes to 6 or 12 bytes a character in stored JSON
        unit = str(draw(st.sampled_from(["\u00e9", "\u2028", "\U0001f600", "\u0430"])))
        return TAINT + unit * int(draw(st.sampled_from([100, 1000, 1017, 1024, 1025, 4000])))
    if kind == "empty":
        return ""
    return tainted(draw)


def text_or(draw: Draw, right: Any, percent: int, extra: list[Any] | None = None) -> Any:
    """`right`, or (`percent` in a hundred) hostile text, a listed wrong value, or nothing (None)."""
    return pick(draw, right, [hostile_text(), None, *(extra or [])], percent)


# -- URIs -----------------------------------------------------------------------------------------
HOSTS = (
    "127.0.0.1:9999",
    "localhost:9999",
    "[::1]:9999",
    "127.0.0.1:99999",
    "127.0.0.1:abc",
    "127.0.0.1:0",
    "127.0.0.1:-1",
    "127.0.0.1:",
    "127.0.0.1:65535",
    "127.0.0.1:65536",
    "127.0.0.1:9999:9999",
    "[::1",
    "[zz]:1",
    "[::ffff:127.0.0.1]:9999",
    "127.1:9999",
    "0x7f000001:9999",
    "2130706433:9999",
    "\uff11\uff12\uff17.\uff10.\uff10.\uff11:9999",
    "LOCALHOST:9999",
    "localhost.:9999",
    "\u24dbocalhost:9999",
    "u:p@127.0.0.1:9999",
    "127.0.0.1:9999@evil.example",
    "127.0.0.1:9999\\@evil.example",
    "evil.example",
    "\u0435xample.com",
    "xn--xample-2of.com",
    "example.com.",
    "exa mple.com",
    "ex%61mple.com",
    "",
)
"""Authorities: loopback in its spellings, bad ports, IDN and confusable hosts, credentials, backslashes."""
SCHEMES = (
    *words("http https HTTP javascript JavaScript data file vbscript about blob cursor com.example.app x+y-z.w 1http"),
    "java\tscript",
    " javascript",
    "",
)
ODD_URIS = (
    "javascript:alert(1)//",
    "data:text/html,<script>alert(1)</script>",
    "file:///etc/passwd",
    "about:blank",
    "cursor://anysphere.cursor-retrieval/oauth/callback",
    "com.example.app:/callback",
    "//evil.example/callback",
    "/callback",
    "callback",
    "http:/callback",
    "http:callback",
    "http://",
    "https://",
    "://x",
    "",
    " ",
    REDIRECT + "#frag",
    REDIRECT + "?a=b",
    REDIRECT + "?a=b#",
    REDIRECT + "/",
    REDIRECT.upper(),
    REDIRECT.replace("http://", "HTTP://"),
    REDIRECT.replace("/callback", "/%2e%2e/callback"),
    REDIRECT.replace("/callback", "/callback%0d%0aSet-Cookie:%20x=1"),
    REDIRECT.replace("/callback", "/callback\\..\\x"),
    "http://127.0.0.1:9999/callback\x00",
)


@st.composite
def uri(draw: Draw) -> str:
    """A redirect URI: the registered one mostly; else a built one (scheme x authority x path), a known
    odd one, the registered one with a control character inside, too long, or carrying markup."""
    kind = weighted(
        draw, [("right", 6), ("built", 4), ("odd", 3), ("control", 2), ("long", 1), ("markup", 1), ("port", 2)]
    )
    if kind == "right":
        return REDIRECT
    if kind == "built":
        scheme, host = draw(st.sampled_from(SCHEMES)), draw(st.sampled_from(HOSTS))
        path = draw(st.sampled_from(["/callback", "", "/", "/cb?x=1", "/" + TAINT, "/\u00e9"]))
        return f"{scheme}://{host}{path}"
    if kind == "odd":
        return str(draw(st.sampled_from(ODD_URIS)))
    if kind == "control":
        at = draw(st.integers(0, len(REDIRECT)))
        return REDIRECT[:at] + str(draw(st.sampled_from(CONTROLS))) + REDIRECT[at:]
    if kind == "long":
        size = int(draw(st.sampled_from([1900, 1969, 1970, 1971, 2000, 5000])))
        unit = str(draw(st.sampled_from(["a", "\u00e9", "\U0001f600"])))
        return (REDIRECT + "/" + unit * size)[:size]
    if kind == "port":  # loopback on another port (RFC 8252 §7.3: the same loopback host matches on any)
        port = draw(st.sampled_from(["1", "80", "8000", "65535", "65536", "99999", "0", "abc", "", "09999"]))
        host = draw(st.sampled_from(["127.0.0.1", "localhost", "[::1]"]))
        return f"http://{host}:{port}/callback"
    return REDIRECT + "?x=" + str(draw(st.sampled_from(MARKUP)))


# -- JSON bodies --------------------------------------------------------------------------------
def nest(depth: int, kind: str) -> str:
    """`depth` nested arrays or objects around 1, closed (valid JSON) or not."""
    opener, closer = {"array": ("[", "]"), "object": ('{"a":', "}"), "mixed": ('[{"a":', "}]")}[kind.split("-")[0]]
    return opener * depth + "1" + ("" if kind.endswith("-open") else closer * depth)


DEPTHS = (100, 500, 900, 950, 990, 1000, 1100, 1500, 2000, 2700, 3000, 4000, 4090, 8000)
depths = st.sampled_from(DEPTHS) | st.integers(1, 8190)
nests = st.builds(
    nest, depths, st.sampled_from(["array", "object", "mixed", "array-open", "object-open", "mixed-open"])
)
"""Deep JSON text (the decoder recurses once per level; Python's limit is about 1000)."""


@st.composite
def hostile_value(draw: Draw) -> Json:
    """A JSON value of the wrong kind for a field: any JSON, huge numbers, surrogates, hostile text, a
    list of those, or a deeply nested list (as a `Nested` marker the body builder writes out)."""
    kind = weighted(draw, [("json", 4), ("huge", 2), ("text", 3), ("surrogate", 1), ("list", 2), ("deep", 2)])
    if kind == "json":
        return draw(json_values)
    if kind == "huge":
        return draw(huge_numbers | st.sampled_from([Nested("9" * 5000), Nested("1e999999"), Nested("-1E400")]))
    if kind == "surrogate":
        return draw(surrogates)
    if kind == "list":
        return draw(st.lists(hostile_text() | json_values, max_size=4))
    if kind == "deep":
        return Nested(draw(nests))
    return draw(hostile_text())


@dataclass(frozen=True)
class Nested:
    """JSON text written into a body as is (deep nesting, numbers json.dumps cannot write)."""

    text: str


def write_json(value: Json, ascii_only: bool = True) -> str:
    """JSON text for a tree that may hold `Nested` pieces."""
    if isinstance(value, Nested):
        return value.text
    if isinstance(value, dict):
        items = (f"{json.dumps(str(k), ensure_ascii=ascii_only)}:{write_json(v, ascii_only)}" for k, v in value.items())
        return "{" + ",".join(items) + "}"
    if isinstance(value, list):
        return "[" + ",".join(write_json(v, ascii_only) for v in value) + "]"
    return json.dumps(value, ensure_ascii=ascii_only)


def encode_json(text: str) -> bytes:
    """UTF-8, with lone surrogates (only a `Nested` piece or `ensure_ascii=False` writes them raw) kept
    as the invalid bytes a client could send."""
    return text.encode("utf-8", "surrogatepass")


CLIENT_FIELDS = words(
    "redirect_uris client_name token_endpoint_auth_method grant_types response_types scope client_uri logo_uri"
    " contacts software_id jwks client_id client_secret"
)


MUTATIONS = (0, 0, 0, 1, 1, 2, 3)
"""How many faults client metadata gets (documents: `DOCUMENT_MUTATIONS`, so more reach the consent page)."""
DOCUMENT_MUTATIONS = (0, 0, 0, 0, 0, 0, 1, 1, 2)


@st.composite
def client_metadata(draw: Draw, self_url: str | None = None, mutations: tuple[int, ...] = MUTATIONS) -> dict[str, Json]:
    """Client metadata: valid-looking (a registration, or a document naming `self_url`) with, now and
    then, one or more fields mutated, dropped or added."""
    metadata: dict[str, Json] = {}
    if self_url is not None:
        metadata["client_id"] = self_url
    metadata["redirect_uris"] = [REDIRECT]
    metadata["client_name"] = pick(draw, "Fuzz Client", [hostile_text()], 20)
    methods = st.sampled_from(["none", "client_secret_basic", "client_secret_post"])
    if self_url is not None:  # a document describes a public client
        metadata["token_endpoint_auth_method"] = pick(draw, "none", [methods, hostile_value(), None], 8)
    elif draw(st.booleans()):
        metadata["token_endpoint_auth_method"] = pick(draw, methods, [hostile_value()], 10)
    if draw(st.booleans()):
        metadata["grant_types"] = draw(
            st.sampled_from([["authorization_code"], ["authorization_code", "refresh_token"], ["refresh_token"]])
        )
    if draw(st.integers(0, 3)) == 0:
        metadata["response_types"] = ["code"]
    for _ in range(draw(st.sampled_from(mutations))):
        mutate_metadata(draw, metadata)
    return {name: value for name, value in metadata.items() if value is not None}


def mutate_metadata(draw: Draw, metadata: dict[str, Json]) -> None:
    how = weighted(draw, [("uris", 5), ("field", 4), ("drop", 1), ("add", 2)])
    if how == "uris":
        uris = draw(st.lists(uri(), max_size=4))
        many = draw(st.sampled_from([0, 0, 0, 10, 11, 50]))
        if many:
            uris = ((uris or [REDIRECT]) * many)[:many]
        metadata["redirect_uris"] = pick(draw, uris, [hostile_value(), REDIRECT], 15)
    elif how == "field":
        metadata[draw(st.sampled_from(CLIENT_FIELDS))] = draw(hostile_value())
    elif how == "drop" and metadata:
        metadata.pop(draw(st.sampled_from(sorted(metadata))))
    else:
        metadata[draw(hostile_text())] = draw(hostile_value())


JSON_TYPES = (
    "application/json",
    "application/json; charset=utf-8",
    "APPLICATION/JSON",
    "application/json; charset=latin-1",
    "text/plain",
    "application/x-www-form-urlencoded",
    "multipart/form-data; boundary=x",
    "application/jwt",
    "",
    None,
)


@st.composite
def register_body(draw: Draw) -> bytes:
    """A registration body: metadata written as JSON (ASCII or raw UTF-8), with a duplicate key, near
    the size cap, or raw garbage (deep nesting, not JSON, invalid UTF-8, not an object)."""
    kind = weighted(draw, [("metadata", 10), ("duplicate", 2), ("padded", 1), ("raw", 3)])
    if kind == "raw":
        return bytes(draw(raw_json()))
    metadata = draw(client_metadata())
    text = write_json(metadata, ascii_only=draw(st.integers(0, 3)) > 0)
    if kind == "duplicate":  # a second value for one key, before or after the first
        name = draw(st.sampled_from(["redirect_uris", "token_endpoint_auth_method", "client_name"]))
        other = write_json(draw(hostile_value() | st.just([REDIRECT]) | st.just("none")))
        extra = f"{json.dumps(name)}:{other}"
        text = "{" + extra + "," + text[1:] if draw(st.booleans()) else text[:-1] + "," + extra + "}"
    elif kind == "padded":  # just under, at and over the cap
        size = int(draw(st.sampled_from([8100, 8170, 8180, 8191, 8192, 8193, 9000])))
        text = text[:-1] + ',"pad":"' + "p" * max(size - len(text) - 9, 0) + '"}'
    return encode_json(text)


@st.composite
def raw_json(draw: Draw) -> bytes:
    """Bodies that are not one JSON object: deep nesting under 8 KB, cut or broken JSON, invalid
    UTF-8, NaN and huge numbers, arrays, scalars, a byte-order mark, random bytes."""
    valid = json.dumps({"redirect_uris": [REDIRECT], "token_endpoint_auth_method": "none"})
    choices: list[Any] = [
        st.builds(lambda text: text.encode(), nests),
        st.builds(lambda depth: ('{"redirect_uris":' + nest(depth, "array") + "}").encode(), depths),
        st.builds(lambda depth: ('{"client_name":"x","jwks":' + nest(depth, "object") + "}").encode(), depths),
        st.builds(lambda cut: valid[:cut].encode(), st.integers(0, len(valid) - 1)),
        st.binary(max_size=64),
        st.sampled_from(
            [
                b"",
                b"null",
                b"[]",
                b'"x"',
                b"1",
                b"{}",
                b"\xef\xbb\xbf" + valid.encode(),
                valid.encode() + b"\x00",
                valid.encode() + b" {}",
                b'{"redirect_uris":["http://127.0.0.1:9999/\xff"]}',
                b'{"redirect_uris":["http://127.0.0.1:9999/\\ud800"],"token_endpoint_auth_method":"none"}',
                b'{"redirect_uris":["http://127.0.0.1:9999/callback"],"client_name":"\\udfff"}',
                b'{"redirect_uris":NaN}',
                b'{"redirect_uris":["http://127.0.0.1:9999/callback"],"client_name":Infinity}',
                b'{"redirect_uris":["http://127.0.0.1:9999/callback"],"x":1e999999}',
                b'{"redirect_uris":["http://127.0.0.1:9999/callback"],"x":' + b"9" * 5000 + b"}",
                b"redirect_uris=http://127.0.0.1:9999/callback",
                b'{"redirect_uris":["http://127.0.0.1:9999/callback"]' + b" " * 8200 + b"}",
            ]
        ),
    ]
    return bytes(draw(st.one_of(*choices)))


# -- register -----------------------------------------------------------------------------------
@st.composite
def register_probes(draw: Draw) -> FacadeProbe:
    """`POST /oauth/register` with a hostile body, sometimes the wrong content type or method."""
    body = draw(register_body())
    headers: list[tuple[str, Any]] = []
    content_type = pick(draw, "application/json", [st.sampled_from(JSON_TYPES), hostile_text()], 12)
    if content_type is not None:
        headers.append(("content-type", content_type))
    if draw(st.integers(0, 19)) == 0:
        headers.append(("content-length", draw(st.sampled_from(["0", "99999999", "-1", "abc", "8193"]))))
    if draw(st.integers(0, 9)) == 0:
        headers.append(("authorization", "Bearer " + str(draw(hostile_text()))))
    method = pick(draw, "POST", ["GET", "PUT"], 3)
    return FacadeProbe("register", method, "/oauth/register", headers=tuple(headers), body=Raw(body))


# -- CIMD documents -------------------------------------------------------------------------------
CLIENT_URLS = (
    f"http://127.0.0.1:{PORT}{PATH}",
    f"https://127.0.0.1:{PORT}{PATH}",
    f"http://localhost:{PORT}{PATH}",
    f"http://[::1]:{PORT}{PATH}",
    f"HTTP://127.0.0.1:{PORT}{PATH}",
    f"http://127.0.0.1:99999{PATH}",
    f"http://127.0.0.1:abc{PATH}",
    f"http://127.0.0.1:0{PATH}",
    f"http://127.0.0.1:{PORT}{PATH}#frag",
    f"http://u:p@127.0.0.1:{PORT}{PATH}",
    f"http://127.0.0.1:{PORT}/./{PATH}",
    f"http://127.0.0.1:{PORT}/x/..{PATH}",
    f"http://127.0.0.1:{PORT}",
    f"http://127.0.0.1:{PORT}/",
    f"http://127.0.0.1:{PORT}{PATH}\u00e9",
    f"http://127.0.0.1:{PORT}{PATH}?q=\u00e9",
    f"http://127.0.0.1:{PORT}{PATH}?q=1",
    f"http://127.0.0.1:{PORT}{PATH} x",
    f"http://127.0.0.1:{PORT}{PATH}\t",
    f"http://127.0.0.1:{PORT}{PATH}%00",
    f"http://127.0.0.1:{PORT}{PATH}%2F..%2F",
    f"http://127.0.0.1:{PORT}{PATH}\\x",
    f"http://127.1:{PORT}{PATH}",
    f"https://127.1:{PORT}{PATH}",
    f"https://0x7f000001:{PORT}{PATH}",
    f"https://\uff11\uff12\uff17.\uff10.\uff10.\uff11:{PORT}{PATH}",
    f"https://\u24dbocalhost:{PORT}{PATH}",
    f"https://localhost.:{PORT}{PATH}",
    f"https://10.0.0.1{PATH}",
    f"https://169.254.169.254{PATH}",
    f"https://[::ffff:127.0.0.1]:{PORT}{PATH}",
    f"https://[2002:7f00:1::]:{PORT}{PATH}",
    f"https://fuzz.invalid{PATH}",
    f"ftp://127.0.0.1:{PORT}{PATH}",
    f"http://127.0.0.1:{PORT}{PATH}" + "a" * 2100,
)
"""The client id URL (`PORT` and `PATH` filled in by the target): the document's own mostly; else
other spellings of loopback, bad ports, fragments, credentials, dot segments, non-ASCII, control
characters, private and reserved addresses, names that do not resolve, other schemes, over 2048."""
CACHE_CONTROLS = (
    "max-age=600",
    "no-store",
    "no-cache",
    "max-age=0",
    "max-age=-1",
    "max-age=abc",
    "max-age=99999999999999999999999999",
    "max-age=" + "9" * 5000,
    "private, max-age=60",
    "",
)


@st.composite
def document_body(draw: Draw) -> bytes:
    """A metadata document: valid with mutated fields mostly; else deep, huge, or not a JSON object."""
    kind = weighted(draw, [("metadata", 16), ("duplicate", 1), ("deep", 3), ("huge", 2), ("raw", 3)])
    if kind == "deep":
        depth = draw(depths | st.integers(1, 16_000))
        shape = draw(st.sampled_from(["whole", "uris", "name", "extra"]))
        text = nest(depth, draw(st.sampled_from(["array", "object", "mixed", "array-open"])))
        if shape == "whole":
            return text.encode()
        field = {"uris": "redirect_uris", "name": "client_name", "extra": "jwks"}[shape]
        return f'{{"client_id":"{SELF}","redirect_uris":["{REDIRECT}"],"{field}":{text}}}'.encode()
    if kind == "huge":
        size = int(draw(st.sampled_from([16_000, 16_300, 16_384, 16_385, 20_000, 200_000])))
        head = f'{{"client_id":"{SELF}","redirect_uris":["{REDIRECT}"],"x":"'
        return (head + "x" * max(size - len(head) - 2, 0) + '"}').encode()
    if kind == "raw":
        return bytes(draw(raw_json() | st.sampled_from([b"<html><body>hello</body></html>", b"\xff\xfe{\x00}\x00"])))
    metadata = draw(client_metadata(SELF, DOCUMENT_MUTATIONS))
    if draw(st.integers(0, 7)) == 0:
        metadata["client_id"] = draw(
            st.sampled_from([SELF + "/", SELF.upper(), SELF + "#", "https://other.example/client.json", None, 1])
            | hostile_value()
        )
    text = write_json(metadata, ascii_only=draw(st.integers(0, 3)) > 0)
    if kind == "duplicate":
        text = text[:-1] + ',"client_id":"https://other.example/x","redirect_uris":["javascript:x"]}'
    return encode_json(text)


@st.composite
def documents(draw: Draw) -> Document:
    status = pick(draw, 200, [st.sampled_from([204, 301, 302, 304, 404, 500, 503, 199, 299, 999])], 8)
    content_type = pick(draw, "application/json", [st.sampled_from(["text/html", "", "application/jwt"])], 10)
    headers = [("Cache-Control", pick(draw, "max-age=600", [st.sampled_from(CACHE_CONTROLS)], 30))]
    if content_type:
        headers.append(("Content-Type", content_type))
    if status in (301, 302):
        headers.append(("Location", f"http://127.0.0.1:{PORT}/elsewhere"))
    return Document(status, tuple(headers), draw(document_body()))


@st.composite
def cimd_probes(draw: Draw) -> FacadeProbe:
    """`/oauth/authorize` for a client that is a metadata document the target serves (hostile, or valid
    with a hostile authorization request), at its own URL or a malformed one."""
    url = pick(draw, CLIENT_URLS[0], [st.sampled_from(CLIENT_URLS)], 25)
    query = authorize_query(draw, Ref("document"), mutate=draw(st.integers(0, 3)) == 0)
    return FacadeProbe(
        "cimd", "GET", "/oauth/authorize", query=query, document=draw(documents()), client_url=url, client="document"
    )


# -- authorize ------------------------------------------------------------------------------------
CHALLENGE = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
"""A well-formed S256 challenge (43 characters): the authorization requests' own (their codes are never
redeemed; the target's sign-ins make their own PKCE pairs)."""


def authorize_query(draw: Draw, client_id: Any, *, mutate: bool) -> tuple[tuple[str, Any], ...]:
    """The query of a valid authorization request for `client_id`; with `mutate`, each parameter is
    sometimes hostile, missing or sent twice, and unknown ones are added."""
    percent = 18 if mutate else 0
    pairs: list[tuple[str, Any]] = [
        ("response_type", text_or(draw, "code", percent, ["token", "code id_token", "CODE", "code "])),
        ("client_id", client_id),
        ("redirect_uri", pick(draw, Ref("redirect"), [uri(), None], percent)),
        ("code_challenge", challenge(draw, percent)),
        ("code_challenge_method", text_or(draw, "S256", percent, ["plain", "s256", "S512", "S256 "])),
        ("state", text_or(draw, "st-1", percent + 10, [st.just("")])),
        ("resource", text_or(draw, RESOURCE, percent, [RESOURCE + "/", BASE, "https://127.0.0.1:8000/mcp"])),
        ("scope", scope(draw, percent)),
    ]
    if mutate and draw(st.integers(0, 3)) == 0:
        name = draw(st.sampled_from([name for name, _ in pairs]))
        pairs.insert(draw(st.integers(0, len(pairs))), (name, draw(hostile_text())))
    if mutate and draw(st.integers(0, 5)) == 0:
        pairs.append(
            (draw(st.sampled_from(["nonce", "prompt", "request", "request_uri", "login_hint"])), draw(hostile_text()))
        )
    return tuple((name, value) for name, value in pairs if value is not None)


def challenge(draw: Draw, percent: int) -> Any:
    wrongs: list[Any] = [
        "a" * 42,
        "a" * 43,
        "a" * 128,
        "a" * 129,
        "\u00e9" * 43,
        st.builds(lambda size: "A" * size, st.integers(0, 3000)),
        hostile_text(),
        None,
    ]
    return pick(draw, CHALLENGE, wrongs, percent)


def scope(draw: Draw, percent: int) -> Any:
    wrongs: list[Any] = [
        st.builds(" ".join, st.lists(st.sampled_from([*SCOPES, "offline_access", "admin", "openid", ""]), max_size=6)),
        " ".join(["mcp:tools"] * 500),
        "mcp:tools\tinventory:read",
        "mcp:tools\x00admin",
        hostile_text(),
        None,
    ]
    return pick(draw, "mcp:tools", wrongs, percent)


def client_choice(draw: Draw) -> str:
    return str(weighted(draw, [("public", 4), ("basic", 2), ("post", 2), ("web", 2), ("widest", 1)]))


def client_id_ref(draw: Draw, percent: int) -> Any:
    """The client's real id mostly; else damaged, invented, a metadata document URL, or missing."""
    wrongs: list[Any] = [
        real("client_id", damage=100),
        hostile_text(),
        st.sampled_from(["mcp-", "https://", "http://", "http://127.0.0.1:8000/mcp", "https://127.0.0.1/x"]),
        "x" * 2049,
        None,
    ]
    return pick(draw, Ref("client_id"), wrongs, percent)


@st.composite
def cookies(draw: Draw, browser_percent: int = 100) -> tuple[tuple[str, Any], ...]:
    """The browser's cookies: the one bound to the flow (`Ref("browser")`) with `browser_percent`
    likelihood, else a hostile one; sometimes a real or forged consent cookie, duplicates, junk."""
    jar: list[tuple[str, Any]] = []
    if draw(st.integers(0, 99)) < browser_percent:
        jar.append(("lmcp_browser", pick(draw, Ref("browser"), [real("browser", damage=100), hostile_cookie()], 15)))
    elif draw(st.booleans()):
        jar.append(("lmcp_browser", draw(hostile_cookie())))
    if draw(st.integers(0, 5)) == 0:
        consent = pick(draw, Ref("consent"), [real("consent", damage=100), hostile_cookie(), forged_consent()], 50)
        jar.append(("lmcp_consent", consent))
    if draw(st.integers(0, 9)) == 0:
        jar.append((draw(st.sampled_from(["lmcp_browser", "lmcp_consent", "x", ""])), draw(hostile_cookie())))
    return tuple(jar)


@st.composite
def hostile_cookie(draw: Draw) -> str:
    """Cookie text an API Gateway event can carry: printable ASCII, long, quoted, or with separators."""
    kind = weighted(draw, [("text", 3), ("long", 1), ("quoted", 1), ("separators", 1)])
    if kind == "long":
        return TAINT + "A" * int(draw(st.sampled_from([4095, 4096, 4097, 10_000])))
    if kind == "quoted":
        return '"' + TAINT + '"'
    if kind == "separators":
        return TAINT + str(draw(st.sampled_from([";", "; lmcp_browser=x", ",", "=", "\\"]))) + TAINT
    alphabet = st.characters(min_codepoint=0x21, max_codepoint=0x7E, exclude_characters=";")
    return TAINT + str(draw(st.text(alphabet, max_size=30)))


@st.composite
def forged_consent(draw: Draw) -> str:
    """A consent cookie that is a JWT the facade did not sign: no signature, `alg` none, another key."""
    header = draw(st.sampled_from([{"alg": "none"}, {"alg": "ES256", "typ": "JWT"}, {"alg": "HS256"}, {}]))
    claims = {"iss": BASE, "aud": BASE + "/consent", "sub": "alice", "exp": 4_000_000_000}
    if draw(st.booleans()):
        claims["sub"] = draw(hostile_value())
    part = [base64.urlsafe_b64encode(encode_json(write_json(p))).rstrip(b"=").decode() for p in (header, claims)]
    return ".".join([*part, str(draw(st.sampled_from(["", "AAAA", "x" * 86])))])


@st.composite
def authorize_probes(draw: Draw) -> FacadeProbe:
    """`GET /oauth/authorize` for a registered client with hostile parameters and cookies; raw query
    junk now and then (bad percent escapes, repeated separators, invalid UTF-8 escapes)."""
    client = client_choice(draw)
    query = authorize_query(draw, client_id_ref(draw, 10), mutate=True)
    raw = pick(draw, "", [st.sampled_from(["&", "&&=&", "a", "=x", "%", "%ZZ=1", "state=%ff%fe", "x=%00", ";"])], 8)
    return FacadeProbe(
        "authorize",
        pick(draw, "GET", ["POST", "HEAD"], 3),
        "/oauth/authorize",
        query=query,
        raw_query=raw,
        cookies=draw(cookies(40)),
        client=client,
    )


# -- forms ----------------------------------------------------------------------------------------
FORM_TYPE = "application/x-www-form-urlencoded"
FORM_TYPES = (
    FORM_TYPE,
    FORM_TYPE + "; charset=utf-8",
    "APPLICATION/X-WWW-FORM-URLENCODED",
    FORM_TYPE + "; charset=utf-16",
    "application/json",
    "multipart/form-data; boundary=x",
    "text/plain",
    "",
    None,
)


def form_fields(draw: Draw, pairs: list[tuple[str, Any]], percent: int) -> Form:
    """`pairs` (None values dropped), and with `percent` likelihood one field twice or an unknown one."""
    kept = [(name, value) for name, value in pairs if value is not None]
    if kept and draw(st.integers(0, 99)) < percent:
        name = draw(st.sampled_from([name for name, _ in kept]))
        kept.insert(draw(st.integers(0, len(kept))), (name, draw(hostile_text() | st.sampled_from([""]))))
    if draw(st.integers(0, 99)) < percent:
        kept.append((str(draw(hostile_text())), draw(hostile_text())))
    return Form(tuple(kept))


@st.composite
def raw_form(draw: Draw, limit: int) -> bytes:
    """Form bodies no urlencoder writes: invalid UTF-8, bad escapes, too many fields, over the limit,
    JSON, multipart."""
    return bytes(
        draw(
            st.sampled_from(
                [
                    b"txn=\xff\xfe&decision=approve",
                    b"grant_type=authorization_code&code=%ZZ&x=%",
                    b"&&&=&=",
                    b"a" * (limit + 1),
                    b"x=" + b"y" * (limit - 2),
                    b"&".join(b"f%d=1" % n for n in range(70)),
                    b'{"grant_type":"authorization_code","txn":"x","decision":"approve"}',
                    b'--x\r\nContent-Disposition: form-data; name="txn"\r\n\r\nx\r\n--x--\r\n',
                    b"decision=approve;txn=x",
                    b"txn=%00&decision=approve%00",
                    b"\x00" * 64,
                ]
            )
            | st.binary(max_size=80)
        )
    )


def form_headers(draw: Draw, percent: int) -> list[tuple[str, Any]]:
    content_type = pick(draw, FORM_TYPE, [st.sampled_from(FORM_TYPES), hostile_text()], percent)
    return [("content-type", content_type)] if content_type is not None else []


# -- consent, callback ----------------------------------------------------------------------------
@st.composite
def consent_probes(draw: Draw) -> FacadeProbe:
    """`POST /oauth/consent`: a real consent page's `txn` and browser cookie mostly; else damaged,
    invented, missing or sent twice; any decision; raw bodies and other content types."""
    wrongs = [real("txn", damage=100), hostile_text(), Ref("spent-txn"), Ref("confirm-txn"), None]
    txn = pick(draw, weighted(draw, [(Ref("txn"), 3), (Ref("confirm-txn"), 1)]), wrongs, 20)
    decision = text_or(draw, st.sampled_from(["approve", "deny"]), 15, ["Approve", "approve ", "yes"])
    confirm = text_or(draw, "yes", 10, ["no", "YES", "on"])
    body: Any = form_fields(draw, [("txn", txn), ("decision", decision), ("confirm", confirm)], 12)
    if draw(st.integers(0, 9)) == 0:
        body = Raw(draw(raw_form(4096)))
    return FacadeProbe(
        "consent",
        pick(draw, "POST", ["GET", "PUT"], 3),
        "/oauth/consent",
        headers=tuple(form_headers(draw, 10)),
        cookies=draw(cookies(90)),
        body=body,
        client=client_choice(draw),
    )


@st.composite
def callback_probes(draw: Draw) -> FacadeProbe:
    """`GET /oauth/callback`: the upstream's `state` and a code it knows mostly; else damaged or
    invented ones, an `error` from the upstream, a code it refuses, duplicates."""
    wrongs = [real("state", damage=100), Ref("txn"), hostile_text(), None]
    state = pick(draw, weighted(draw, [(Ref("state"), 3), (Ref("remembered-state"), 1)]), wrongs, 20)
    code = text_or(draw, st.sampled_from(["alice", "bob"]), 20, ["mallory", "alice\x00", "ALICE"])
    pairs: list[tuple[str, Any]] = [("code", code), ("state", state), ("iss", "https://idp.example")]
    if draw(st.integers(0, 7)) == 0:
        pairs.append(("error", draw(st.sampled_from(["access_denied", "login_required"]) | hostile_text())))
        pairs.append(("error_description", draw(hostile_text())))
    if draw(st.integers(0, 9)) == 0:
        pairs.insert(0, (draw(st.sampled_from(["code", "state"])), draw(hostile_text())))
    raw = pick(draw, "", [st.sampled_from(["&", "state", "code", "%ZZ", "state=%ff"])], 5)
    query = tuple((name, value) for name, value in pairs if value is not None)
    return FacadeProbe(
        "callback",
        "GET",
        "/oauth/callback",
        query=query,
        raw_query=raw,
        cookies=draw(cookies(90)),
        client=client_choice(draw),
    )


# -- token, revoke ----------------------------------------------------------------------------------
def client_auth(draw: Draw, client: str) -> tuple[list[tuple[str, Any]], list[tuple[str, Any]]]:
    """(form fields, headers) authenticating `client` as it registered; sometimes the wrong way, with
    a damaged secret, or hostile Basic credentials."""
    fields: list[tuple[str, Any]] = []
    headers: list[tuple[str, Any]] = []
    how = {"basic": "basic", "post": "post"}.get(client, "public")
    how = pick(draw, how, ["public", "basic", "post", "none", "both"], 12)
    if how in ("public", "post", "both"):
        fields.append(("client_id", client_id_ref(draw, 8)))
    if how in ("post", "both"):
        fields.append(("client_secret", pick(draw, Ref("secret"), [real("secret", damage=100), hostile_text()], 12)))
    if how in ("basic", "both"):
        headers.append(("authorization", pick(draw, Ref("basic"), [hostile_basic()], 20)))
    return fields, headers


@st.composite
def hostile_basic(draw: Draw) -> str:
    """An `Authorization` value claiming Basic: bad base64, bytes that are not UTF-8, no colon, bad
    percent escapes, a character outside ASCII, another scheme, huge."""

    def b64(raw: bytes) -> str:
        return base64.b64encode(raw).decode()

    return str(
        draw(
            st.sampled_from(
                [
                    "Basic !!!",
                    "Basic",
                    "Basic ",
                    "basic " + b64(b"a:b"),
                    "BASIC\t" + b64(b"a:b"),
                    "Basic " + b64(b"\xff\xfe:\xff"),
                    "Basic " + b64(b"nocolon"),
                    "Basic " + b64(b"%ZZ:%ZZ"),
                    "Basic " + b64(b"%00:%00"),
                    "Basic " + b64(b":"),
                    "Basic " + b64(b"a:b")[:-1],
                    "Basic " + b64(b"a:b") + "=====",
                    "Basic " + b64(("x" * 20_000 + ":y").encode()),
                    "Basic " + b64(("mcp-" + TAINT + ":" + TAINT).encode()),
                    "Basic " + b64(b"a:b") + "\u00e9",
                    "Basic \u00ff",
                    "Bearer " + TAINT,
                    "Digest " + TAINT,
                ]
            )
        )
    )


def verifier(draw: Draw, percent: int) -> Any:
    wrongs: list[Any] = [
        real("verifier", damage=100),
        "v" * 42,
        "v" * 129,
        "\u00e9" * 50,
        st.builds(lambda size: "V" * size, st.integers(0, 3000)),
        hostile_text(),
        None,
    ]
    return pick(draw, Ref("verifier"), wrongs, percent)


@st.composite
def token_probes(draw: Draw) -> FacadeProbe:
    """`POST /oauth/token`: a real code with its verifier, or a real refresh token, for a registered
    client authenticated its way mostly; each part sometimes damaged, hostile, missing or doubled;
    raw bodies, other content types and hostile Basic credentials."""
    client = client_choice(draw)
    grant = weighted(draw, [("authorization_code", 5), ("refresh_token", 4), ("other", 1)])
    fields, headers = client_auth(draw, client)
    if grant == "authorization_code":
        code = pick(draw, Ref("code"), [real("code", damage=100), Ref("spent-code"), hostile_text(), None], 20)
        fields += [
            ("grant_type", "authorization_code"),
            ("code", code),
            ("code_verifier", verifier(draw, 15)),
            ("redirect_uri", pick(draw, Ref("redirect"), [uri(), None, None], 12)),
        ]
    elif grant == "refresh_token":
        refresh = pick(
            draw, Ref("refresh"), [real("refresh", damage=100), Ref("spent-refresh"), hostile_text(), None], 20
        )
        fields += [("grant_type", "refresh_token"), ("refresh_token", refresh)]
        if draw(st.integers(0, 3)) == 0:
            fields.append(("scope", scope(draw, 50)))
    else:
        fields.append(("grant_type", draw(hostile_text() | st.sampled_from(["client_credentials", "password", ""]))))
    if draw(st.integers(0, 3)) == 0:
        fields.append(("resource", text_or(draw, RESOURCE, 40, [RESOURCE + "/"])))
    body: Any = form_fields(draw, fields, 10)
    if draw(st.integers(0, 12)) == 0:
        body = Raw(draw(raw_form(16_384)))
    return FacadeProbe(
        "token",
        pick(draw, "POST", ["GET", "PUT"], 3),
        "/oauth/token",
        headers=tuple(form_headers(draw, 8) + headers),
        body=body,
        client=client,
    )


@st.composite
def revoke_probes(draw: Draw) -> FacadeProbe:
    """`POST /oauth/revoke` (RFC 7009): a real or hostile token, a hint, client authentication (the
    facade may not serve revocation: a 404 or 405 is not a finding)."""
    client = client_choice(draw)
    fields, headers = client_auth(draw, client)
    token = pick(draw, Ref("refresh"), [real("refresh", damage=100), hostile_text(), None], 30)
    hint = pick(draw, None, [st.sampled_from(["refresh_token", "access_token"]), hostile_text()], 50)
    body = form_fields(draw, [*fields, ("token", token), ("token_type_hint", hint)], 10)
    return FacadeProbe(
        "revoke",
        pick(draw, "POST", ["GET"], 5),
        "/oauth/revoke",
        headers=tuple(form_headers(draw, 8) + headers),
        body=body,
        client=client,
    )


def facade_probes(family: str) -> st.SearchStrategy[FacadeProbe]:
    from .agent_probes import FAMILIES as AGENT_FAMILIES
    from .agent_probes import agent_probes

    if family in AGENT_FAMILIES:
        return agent_probes(family)
    strategies: dict[str, Any] = {
        "register": register_probes,
        "cimd": cimd_probes,
        "authorize": authorize_probes,
        "consent": consent_probes,
        "callback": callback_probes,
        "token": token_probes,
        "revoke": revoke_probes,
    }
    result: st.SearchStrategy[FacadeProbe] = strategies[family]()
    return result
