"""What the fuzzer sends to a kit with auth `jwt` (the `auth` family): requests whose bearer token has a
hostile header or hostile claims (signed with the issuer's real key, so they get past the signature
to every later check, or with none), hostile `Authorization` text, and hostile `Mcp-Param-*` values
for a tool that routes on a number.

Every string the fuzzer makes up carries `TAINT`, so the properties can tell an echo of untrusted input
in a response header from the kit's own text (`properties.header_rules`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from hypothesis import strategies as st

from .probes import (
    ACCEPT_BOTH,
    META_CAPABILITIES,
    META_VERSION,
    MODERN,
    Draw,
    Json,
    Probe,
    Ref,
    encoded,
    pick,
    weighted,
)

TAINT = "XTAINTX"
"""In every made-up string: a response header holding it echoes what a client sent."""
ALGORITHMS = ("RS256", "ES256", "PS256", "RS512", "HS256", "none", "EdDSA", "", "rs256")
SCOPES = ("inventory:read", "inventory:write", "admin", "mcp:tools")
TOOLS = ("whoami", "restock", "audit", "shard", "rotate")


@dataclass(frozen=True)
class Token:
    """A JWT the target signs: `header` and `claims` may hold `Ref("issuer")` and `Ref("audience")`;
    `key` is `rsa` or `ec` (the issuer's, so the signature verifies), `foreign` (a key it never
    published) or `none` (no signature)."""

    header: tuple[tuple[str, Any], ...]
    claims: tuple[tuple[str, Any], ...]
    key: str


@dataclass(frozen=True)
class Bearer:
    """An `Authorization` header value: `scheme` then the token (a `Token` or raw text)."""

    scheme: str
    token: Any


def tainted(draw: Draw, size: int = 24) -> str:
    """Made-up text with the taint marker somewhere in it (long sometimes, non-Latin-1 sometimes)."""
    alphabet = st.characters(min_codepoint=0x20, max_codepoint=0x2FFF, exclude_categories=["Cs"])
    before = draw(st.text(alphabet, max_size=size))
    after = draw(st.text(alphabet, max_size=size))
    text = before + TAINT + after
    return text * draw(st.sampled_from([1, 1, 1, 50, 400]))


HOSTILE: list[Json] = ["T", None, 7, -1, 2**70, 1e308, True, [], {}, ["T"], {"T": "T"}, ""]
"""Values a hostile part takes (`"T"`: made-up text)."""
FAULTS = [
    ("none", 6),
    ("alg", 2),
    ("kid", 1),
    ("typ", 1),
    ("header", 1),
    ("iss", 1),
    ("sub", 1),
    ("aud", 1),
    ("exp", 1),
    ("nbf", 1),
    ("scope", 1),
    ("claim", 1),
    ("key", 1),
    ("text", 1),
    ("missing", 1),
]
"""Which part of the request is hostile (one at a time, so every later check is reached too)."""


def _hostile(draw: Draw, choices: list[Json] | None = None) -> Json:
    value = draw(st.sampled_from([*(choices or []), *HOSTILE]))
    if value == "T":
        return tainted(draw)
    if value == ["T"]:
        return [tainted(draw)]
    if value == {"T": "T"}:
        return {tainted(draw, 6): tainted(draw)}
    return value


@st.composite
def token(draw: Draw, fault: str) -> Token:
    """A token right in every part but `fault`, signed with the key its algorithm names."""
    key = draw(st.sampled_from(["rsa", "ec"]))
    header: dict[str, Json] = {"alg": "RS256" if key == "rsa" else "ES256", "kid": f"{key}-1"}
    now = 1_900_000_000  # moved to the real clock by the target (`targets.AuthTarget.sign`)
    scopes = draw(st.lists(st.sampled_from(SCOPES), max_size=4))
    claims: dict[str, Json] = {
        "iss": Ref("issuer"),
        "sub": draw(st.sampled_from(["alice", "bob", "client:alice"])),
        "aud": Ref("audience"),
        "exp": now + 300,
        "scope": " ".join(["mcp:tools", *scopes]),
    }
    if fault == "alg":
        header["alg"] = _hostile(draw, list(ALGORITHMS))
    elif fault == "kid":
        header["kid"] = _hostile(draw, ["rsa-1", "ec-1"])
    elif fault == "typ":
        header["typ"] = _hostile(draw, ["JWT", "at+jwt", "application/at+jwt"])
    elif fault == "header":
        header[draw(st.sampled_from(["crit", "jku", "jwk", "x5u", "x5c", "cty", "b64", "zip", "T"]))] = _hostile(draw)
    elif fault in ("iss", "sub", "aud", "scope", "exp", "nbf"):
        claims[fault] = _hostile(draw, [now - 600, now + 3600] if fault in ("exp", "nbf") else None)
    elif fault == "claim":
        claims[draw(st.sampled_from(["iat", "client_id", "azp", "token_use", "scp", "T"]))] = _hostile(draw)
    elif fault == "key":
        key = draw(st.sampled_from(["foreign", "none"]))
    header = {tainted(draw, 6) if k == "T" else k: v for k, v in header.items()}
    claims = {k: v for k, v in claims.items() if v is not None or fault in ("iss", "sub", "aud", "exp", "scope")}
    return Token(tuple(header.items()), tuple(claims.items()), key)


@st.composite
def authorization(draw: Draw) -> Any:
    """A well-formed bearer token, or one with exactly one hostile part, or hostile text, or nothing."""
    fault = weighted(draw, FAULTS)
    if fault == "missing":
        return None
    scheme = "Bearer" if draw(st.integers(0, 9)) else _hostile(draw, ["bearer", "Basic", "Bearer "])
    scheme = scheme if isinstance(scheme, str) else str(scheme)
    if fault == "text":
        return Bearer(scheme, tainted(draw) + draw(st.sampled_from(["", ".a.b", "..", ".e30.e30.", " x"])))
    return Bearer(scheme, draw(token(fault)))


def mcp_param_count(draw: Draw) -> str:
    """An `Mcp-Param-Count` value: the argument's own number, or a hostile one."""
    digits = st.integers(1, 5000).map(lambda n: "1" + "0" * n)
    return pick(
        draw,
        st.sampled_from(["5", "5.0", "5e0", "=?base64?NQ==?="]),
        [digits, st.sampled_from(["NaN", "Infinity", "-Infinity", "1e400", "0x5", "5_0", "", " 5"]), "T"],
        50,
    )


@st.composite
def auth_probes(draw: Draw) -> Probe:
    """One 2026 request to the scoped app with a hostile token or a hostile `Mcp-Param-Count`."""
    tool = draw(st.sampled_from(TOOLS))
    count: Json = pick(draw, 5, [10**400, 1e308, -0.0, 2**63, 5.5], 30)
    arguments: dict[str, Json] = {"count": count} if tool == "shard" else ({"item": "x"} if tool == "restock" else {})
    meta = {META_VERSION: MODERN, META_CAPABILITIES: {"elicitation": {}, "extensions": {}}}
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": tool, "arguments": arguments, "_meta": meta},
    }
    headers: list[tuple[str, Any]] = [
        ("host", Ref("host")),
        ("accept", ACCEPT_BOTH),
        ("content-type", "application/json"),
        ("mcp-protocol-version", MODERN),
        ("mcp-method", "tools/call"),
        ("mcp-name", tool),
    ]
    if tool == "shard":
        value = mcp_param_count(draw)
        headers.append(("mcp-param-count", tainted(draw) if value == "T" else value))
    elif draw(st.integers(0, 5)) == 0:
        headers.append(("mcp-param-" + draw(st.sampled_from(["count", "x"])), encoded(tainted(draw))))
    sent = draw(authorization())
    if sent is not None:
        headers.append(("authorization", sent))
    return Probe("auth", "POST", tuple(headers), body)
