"""What the facade fuzzer sends for identity for agents and enterprises: the machine grants, DPoP, and the
metadata document, as `FacadeProbe`s of three more families.

- `machine`: `POST /oauth/token` with `grant_type=client_credentials` or the jwt-bearer grant
  (`urn:ietf:params:oauth:grant-type:jwt-bearer`) for the target's operator clients
  (`LAMBDA_MCP_AUTH_CLIENTS`): RFC 7523 client assertions (valid ones signed fresh per probe, or with a
  hostile header, hostile or missing claims, another key, no signature, damaged text), the Basic secret of
  a `client_secret_basic` client, an enterprise IdP's ID-JAG (valid, hostile, from an untrusted or an
  unreachable issuer, for another resource or client), `scope` values, now and then a DPoP proof.
- `dpop`: DPoP proofs (RFC 9449) at the token endpoint (binding a client_credentials token, a code's, a
  public client's refresh) and at `/mcp` with `Authorization: DPoP <bound token>`, `Bearer <bound token>`,
  `DPoP <unbound token>`: valid proofs for the right URL and method, and proofs with a wrong `typ`, a
  private or unknown `jwk`, a `jwk` that is not an object, a non-numeric `iat`, a huge `jti`, a bad
  `htu`, a wrong `ath` or nonce, two `DPoP` headers.
- `metadata`: the RFC 8414 document (and its OpenID twin, the JWKS, the protected resource metadata) with
  hostile methods, queries and headers.

A JWT the target signs when it sends the probe is a `Signed`: its kind (`assertion`, `id-jag`, `dpop`),
made valid for the probe (the operator client's id, the facade's issuer, this request's method and URL,
the access token's hash, the current nonce), then changed as the probe says. `Cat` joins text and `Ref`s
(`"DPoP " + Ref("bound-token")`). Made-up text carries `TAINT`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from hypothesis import strategies as st

from .auth_probes import TAINT
from .facade_probes import (
    BASE,
    RESOURCE,
    FacadeProbe,
    Form,
    Nested,
    client_id_ref,
    form_fields,
    form_headers,
    hostile_basic,
    hostile_text,
    nests,
)
from .probes import MANGLES, META_CAPABILITIES, META_VERSION, MODERN, Draw, Json, Ref, pick, real, weighted

TOKEN_URL = BASE + "/oauth/token"
IDP = "https://idp.enterprise.example"
"""The trusted enterprise IdP (`LAMBDA_MCP_AUTH_TRUSTED_ISSUERS`), its keys served by a stand-in fetch."""
DOWN_IDP = "https://down.enterprise.example"
"""A trusted IdP whose keys cannot be fetched: the facade answers 503 `temporarily_unavailable`."""
ASSERTION_TYPE = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer"
OPERATORS = {
    "agent": "agent-1",
    "narrow": "agent-2",
    "keyed": "agent-uri",
    "rsa": "agent-rsa",
    "down": "agent-down",
    "ci": "ci-job",
}
"""The target's operator clients by the name probes use: `agent` (private_key_jwt, an EC key in `jwks`,
both machine grants), `narrow` (the same, client_credentials only, one scope), `keyed` (private_key_jwt,
its `jwks_uri` on the loopback document server), `rsa` (an RSA key: RS256 and PS256 assertions), `down`
(a `jwks_uri` that answers 404: 503), `ci` (`client_secret_basic`, client_credentials only)."""
SIGNING = ("agent", "narrow", "keyed", "rsa", "down")
DROP = "@@DROP@@"
"""As a header or claim value of a `Signed`: leave that member out."""
FAMILIES = ("machine", "dpop", "metadata")
META = {META_VERSION: MODERN, META_CAPABILITIES: {}}
FORM_TYPE = (("content-type", "application/x-www-form-urlencoded"),)
CALL_HEADERS = (
    ("accept", "application/json, text/event-stream"),
    ("content-type", "application/json"),
    ("mcp-protocol-version", MODERN),
    ("mcp-method", "tools/call"),
    ("mcp-name", "whoami"),
)
CALL = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "whoami", "arguments": {}, "_meta": META}}


@dataclass(frozen=True)
class Now:
    """A time claim: now plus `offset` seconds, as an integer, a float or a string (`as_text`)."""

    offset: float
    kind: str = "int"


@dataclass(frozen=True)
class Signed:
    """A JWT the target makes when it sends the probe.

    kind: `assertion` (an RFC 7523 client assertion of `client`), `id-jag` (the IdP's, for `client`),
    `dpop` (a proof for this request: its method, `url` or the request's URL, the `ath` of the access
    token `Ref(token)` when `token` is set, the current nonce). `header` and `claims` change the valid
    ones (`DROP` removes a member; values may be `Now` or `Nested`); `key` signs: `right` (the one the
    server expects), `other` (a key it never saw, same `kid`), `client` (the client's key for an ID-JAG),
    `idp`, `rsa` and `ed` (DPoP keys of other types), `none` (alg none, no signature), `hs256` (the
    public key as an HMAC secret), `unsigned` and `garbage` signatures; `jwk` is the proof header's key:
    `public` (the signing key's), `private` (with `d`), `other` (another key's), `unknown` (kty `XYZ`),
    `oct`, `missing` (no `x`), `numeric` (`x` a number), `huge`, `crv` (another curve). `damage` harms
    the finished text (`probes.mangle`'s, or `b64` `pad` `space` `segment`)."""

    kind: str
    client: str = "agent"
    key: str = "right"
    header: tuple[tuple[str, Any], ...] = ()
    claims: tuple[tuple[str, Any], ...] = ()
    jwk: str = "public"
    damage: str = ""
    pick: int = 0
    token: str = ""
    url: str = ""


@dataclass(frozen=True)
class Cat:
    """Text made of parts: strings and `Ref`s the target fills in."""

    parts: tuple[Any, ...]


# -- hostile JWT members ----------------------------------------------------------------------------
BIG = "1" + "0" * 400
"""An integer JSON can hold and PyJWT accepts, but a float cannot."""
EDGES: tuple[Json, ...] = (
    DROP,
    Nested(BIG),
    Nested("-" + BIG),
    Nested("1e999"),
    Nested("NaN"),
    Nested('"\\ud800surrogate"'),
    Nested("[" * 900 + "]" * 900),
    None,
    True,
    [],
    {"a": 1},
    "y" * 9000,
)
"""The values most likely to break what reads a claim: missing; an integer no float holds; infinity and NaN
(JSON extensions Python reads); a lone surrogate (no UTF-8 for it); deep; null; of the wrong type; huge."""
ODD_VALUES: tuple[Json, ...] = (
    0,
    -1,
    1.5,
    False,
    ["x"],
    "",
    2**63,
    2**64,
    Nested("-1e999"),
    Nested("Infinity"),
    Nested("1e308"),
    Nested('"\\ud800"'),
    Nested('{"a":' * 1200 + "1" + "}" * 1200),
    "x" * 300,
    "\u00e9\U0001f600" * 40,
)
"""More values of the wrong kind for any claim."""


@st.composite
def odd_value(draw: Draw) -> Json:
    """A hostile claim value: an edge value mostly, else of the wrong type, made-up text, or deep."""
    kind = weighted(draw, [("edge", 5), ("listed", 3), ("text", 2), ("deep", 1)])
    if kind == "edge":
        return draw(st.sampled_from(EDGES))
    if kind == "text":
        return draw(hostile_text())
    if kind == "deep":
        return Nested(draw(nests.filter(lambda text: len(text) < 6000)))
    return draw(st.sampled_from(ODD_VALUES))


TIMES = (
    Now(-400),
    Now(-100),
    Now(-29),
    Now(-31),
    Now(0),
    Now(30),
    Now(60),
    Now(119.5, "float"),
    Now(299),
    Now(329),
    Now(331),
    Now(3600),
    Now(10**9),
    Now(120, "text"),
    Now(-(10**12)),
)
"""Times around the windows: the leeway (30 s), an assertion's longest life (300 s), a proof's age (120 s)."""


def claim_change(draw: Draw, names: tuple[str, ...], extra: dict[str, list[Json]]) -> tuple[str, Json]:
    """One claim (of those the server reads mostly, else another or a made-up one) with a near miss of
    its own (`extra`), a time around a window, or a hostile value."""
    name = str(weighted(draw, [(st.sampled_from(names), 6), (st.sampled_from(["nbf", "iat", "exp", TAINT]), 1)]))
    choices = [(odd_value(), 2)]
    if name in ("exp", "iat", "nbf"):
        choices.append((st.sampled_from(TIMES), 2))
    if name in extra:
        choices.append((st.sampled_from(extra[name]), 3))
    return name, weighted(draw, choices)


def header_change(draw: Draw, kind: str) -> tuple[str, Json]:
    algs = ["none", "None", "HS256", "RS256", "ES384", "ES512", "PS256", "EdDSA", "", "es256", "ES256 "]
    types = {"dpop": ["JWT", "dpop+JWT", "application/dpop+jwt", "at+jwt"], "id-jag": ["JWT", "at+jwt"]}
    types["id-jag"] += ["application/oauth-id-jag+jwt", "OAUTH-ID-JAG+JWT", "oauth-id-jag+jwt; x=1"]
    types["assertion"] = ["JWT", "dpop+jwt", "oauth-id-jag+jwt"]
    name = weighted(draw, [("alg", 4), ("typ", 3), ("kid", 2), ("crit", 1), ("jku", 1), ("other", 1)])
    if name == "alg":
        return "alg", draw(st.sampled_from(algs) | odd_value())
    if name == "typ":
        return "typ", draw(st.sampled_from(types[kind]) | odd_value())
    if name == "kid":
        return "kid", draw(st.sampled_from(["unknown", "x" * 5000, TAINT]) | odd_value())
    if name == "crit":
        return "crit", draw(st.sampled_from([["exp"], ["b64"], [TAINT], "exp", []]))
    if name == "jku":
        return draw(st.sampled_from(["jku", "x5u"])), "https://evil.example/jwks.json"
    return draw(hostile_text()), draw(odd_value())


DAMAGES = (*MANGLES, "b64", "pad", "space", "segment")


def signed(draw: Draw, kind: str, client: str = "agent", percent: int = 45, **fields: Any) -> Signed:
    """A JWT of `kind`: valid mostly; `percent` times in a hundred with hostile header members or claims,
    signed by the wrong key or none, or damaged text."""
    if draw(st.integers(0, 99)) >= percent:
        return Signed(kind, client, pick=draw(st.integers(0, 400)), **fields)
    header: list[tuple[str, Json]] = []
    claims: list[tuple[str, Json]] = []
    key = "right"
    jwk = "public"
    damage = ""
    for _ in range(draw(st.sampled_from([1, 1, 1, 2, 3]))):
        how = weighted(
            draw, [("claim", 6), ("header", 3), ("key", 2), ("damage", 2), ("jwk", 3 if kind == "dpop" else 0)]
        )
        if how == "claim":
            claims.append(claim_change(draw, *CLAIMS[kind]))
        elif how == "header":
            header.append(header_change(draw, kind))
        elif how == "key":
            key = draw(st.sampled_from(KEYS[kind]))
        elif how == "jwk":
            jwk = draw(st.sampled_from(["private", "other", "unknown", "oct", "missing", "numeric", "huge", "crv"]))
            if draw(st.integers(0, 3)) == 0:  # a jwk that is not an object at all
                header.append(("jwk", draw(st.sampled_from(["x", 1, None, [], ["kty"], TAINT]))))
        else:
            damage = draw(st.sampled_from(DAMAGES))
    return Signed(kind, client, key, tuple(header), tuple(claims), jwk, damage, draw(st.integers(0, 400)), **fields)


CLAIMS: dict[str, tuple[tuple[str, ...], dict[str, list[Json]]]] = {
    "assertion": (
        ("iss", "sub", "aud", "exp", "jti"),
        {
            "iss": ["agent-2", "ci-job", "mcp-x", BASE, "Agent-1", "agent-1 "],
            "sub": ["agent-2", "ci-job", "Agent-1"],
            "aud": [BASE + "/", RESOURCE, "https://elsewhere.example", [BASE, "x"], [], TOKEN_URL + "?x", BASE.upper()],
            "jti": ["x" * 256, "x" * 257, "a"],
        },
    ),
    "id-jag": (
        ("iss", "sub", "aud", "resource", "client_id", "exp", "jti", "scope", "groups", "email"),
        {
            "iss": ["https://evil.example", IDP + "/", IDP.upper(), DOWN_IDP, BASE],
            "sub": ["x" * 5000, "alice", "enterprise-user-8"],
            "aud": ["https://other-as.example", [BASE], [BASE, "x"], RESOURCE, TOKEN_URL],
            "resource": ["https://other.example/mcp", RESOURCE + "/", [RESOURCE, "x"], [], [[RESOURCE]]],
            "client_id": ["agent-2", "ci-job", "mcp-x", "Agent-1"],
            "scope": ["mcp:tools", "inventory:write", "", "mcp:tools inventory:read admin", "offline_access"],
            "groups": [["mcp-users"], ["x"] * 2000, [{"a": TAINT}]],
            "email": ["a@example.com", "x" * 5000],
            "jti": ["x" * 256, "x" * 257],
        },
    ),
    "dpop": (
        ("htm", "htu", "iat", "jti", "ath", "nonce"),
        {
            "htm": ["GET", "post", "PUT", "POST "],
            "htu": [
                RESOURCE + "?q=1#f",
                RESOURCE + "/",
                RESOURCE.upper(),
                "HTTP://127.0.0.1:8000/mcp",
                "http://127.0.0.1:80/mcp",
                "https://127.0.0.1:8000/mcp",
                TOKEN_URL,
                "http://127.0.0.1:abc/mcp",
                "http://127.0.0.1:99999/mcp",
                "http://127.0.0.1:-1/mcp",
                "http://[::1/mcp",
                "http://[zz]:8000/mcp",
                "//127.0.0.1:8000/mcp",
                "/mcp",
                "\u00e9://x",
            ],
            "iat": ["now", "1700000000"],
            "jti": ["x" * 7, "x" * 8, "x" * 256, "x" * 257, "x" * 7000, Nested('"x\\ud800xxxxxxxx"')],
            "ath": ["AAAA", "x" * 43, "=" * 43],
            "nonce": ["1.abc", "abc", "99999999999999999999.x", "0.x", ".", "-1.x", "\u0661.x", "9" * 5000 + ".x"],
        },
    ),
}
KEYS = {
    "assertion": ("other", "client", "idp", "none", "hs256", "unsigned", "garbage"),
    "id-jag": ("other", "client", "none", "hs256", "unsigned", "garbage"),
    "dpop": ("other", "rsa", "ed", "none", "hs256", "unsigned", "garbage"),
}


# -- machine grants ---------------------------------------------------------------------------------
SCOPE_VALUES = (
    "mcp:tools",
    "inventory:read",
    "mcp:tools inventory:read",
    "inventory:write",
    "offline_access",
    "admin",
    "",
    " ",
    "mcp:tools mcp:tools",
    "mcp:tools\tinventory:read",
    " ".join(["inventory:read"] * 400),
)


def scope_field(draw: Draw, percent: int) -> Any:
    return pick(draw, None, [st.sampled_from(SCOPE_VALUES), hostile_text()], percent)


def machine_auth(draw: Draw, client: str) -> tuple[list[tuple[str, Any]], list[tuple[str, Any]]]:
    """(form fields, headers) authenticating `client`: an assertion for the key clients, Basic for `ci`,
    `client_id` for a public DCR client; now and then the wrong way, both ways, or not at all."""
    fields: list[tuple[str, Any]] = []
    headers: list[tuple[str, Any]] = []
    how = "assertion" if client in SIGNING else "basic" if client == "ci" else "public"
    how = pick(draw, how, ["assertion", "basic", "post", "public", "both", "none"], 10)
    if how in ("assertion", "both"):
        kind = pick(draw, ASSERTION_TYPE, [st.sampled_from([ASSERTION_TYPE + " ", "jwt-bearer", ""]), None], 6)
        assertion = pick(
            draw, signed(draw, "assertion", client if client in SIGNING else "agent"), [hostile_text(), None], 4
        )
        fields += [("client_assertion_type", kind), ("client_assertion", assertion)]
        if draw(st.integers(0, 4)) == 0:  # client_id beside the assertion: its own, another, made up
            named = draw(st.sampled_from([OPERATORS.get(client, "agent-1"), "agent-2", "ci-job"]) | hostile_text())
            fields.append(("client_id", named))
    if how in ("basic", "both"):
        headers.append(
            (
                "authorization",
                pick(draw, Ref("operator-basic"), [real("operator-basic", damage=100), hostile_basic()], 15),
            )
        )
    if how == "post":
        secret = pick(draw, Ref("operator-secret"), [real("operator-secret", damage=100), hostile_text()], 20)
        fields += [("client_id", pick(draw, "ci-job", ["agent-1", hostile_text()], 15)), ("client_secret", secret)]
    if how == "public":
        fields.append(("client_id", client_id_ref(draw, 8)))
    return fields, headers


@st.composite
def machine_probes(draw: Draw) -> FacadeProbe:
    """`POST /oauth/token` with a machine grant for an operator client (or a DCR one, which may not)."""
    client = weighted(
        draw, [("agent", 8), ("ci", 4), ("narrow", 1), ("keyed", 1), ("rsa", 1), ("down", 1), ("public", 1)]
    )
    fields, headers = machine_auth(draw, client)
    grant = weighted(draw, [("client_credentials", 5), (JWT_BEARER, 5), ("other", 1)])
    if grant == "other":
        grant = draw(st.sampled_from([JWT_BEARER.upper(), "urn:ietf:params:oauth:grant-type:token-exchange", ""]))
    fields.append(("grant_type", grant))
    unavailable = client == "down"
    if grant == JWT_BEARER or draw(st.integers(0, 9)) == 0:
        holder = client if client in SIGNING else "agent"
        wrongs = [hostile_text(), "a.b.c", "", None, real("bound-token"), Ref("spent-id-jag"), Ref("spent-id-jag")]
        jag = pick(draw, signed(draw, "id-jag", holder), wrongs, 8)
        if isinstance(jag, Signed) and dict(jag.claims).get("iss") == DOWN_IDP:
            unavailable = True
        fields.append(("assertion", jag))
    fields.append(("scope", scope_field(draw, 40)))
    if draw(st.integers(0, 5)) == 0:
        fields.append(("resource", pick(draw, RESOURCE, [RESOURCE + "/", hostile_text()], 50)))
    if draw(st.integers(0, 5)) == 0:
        headers.append(("dpop", pick(draw, signed(draw, "dpop", percent=50), [hostile_text(), ""], 10)))
    body = form_fields(draw, fields, 6)
    return FacadeProbe(
        "machine",
        pick(draw, "POST", ["GET", "PUT"], 2),
        "/oauth/token",
        headers=tuple(form_headers(draw, 5) + headers),
        body=body,
        client=client,
        repeat=draw(st.integers(0, 7)) == 0,
        unavailable=unavailable,
    )


# -- DPoP -----------------------------------------------------------------------------------------------
@st.composite
def dpop_probes(draw: Draw) -> FacadeProbe:
    """DPoP at `/mcp` (mostly) and at the token endpoint."""
    where = weighted(draw, [("mcp", 6), ("token", 4), ("refresh", 1), ("code", 1)])
    if where == "mcp":
        return mcp_probe(draw)
    headers: list[tuple[str, Any]] = []
    client = "agent"
    if where == "token":
        client = weighted(draw, [("agent", 4), ("ci", 2), ("rsa", 1)])
        fields, headers = machine_auth(draw, client)
        fields += [("grant_type", "client_credentials"), ("scope", scope_field(draw, 20))]
    elif where == "refresh":
        client = "public"
        refresh = pick(draw, Ref("bound-refresh"), [real("bound-refresh", damage=100)], 10)
        fields = [("grant_type", "refresh_token"), ("refresh_token", refresh), ("client_id", Ref("client_id"))]
    else:
        client = "public"
        fields = [("grant_type", "authorization_code"), ("code", Ref("code")), ("code_verifier", Ref("verifier"))]
        fields += [("redirect_uri", Ref("redirect")), ("client_id", Ref("client_id"))]
    proofs = pick(
        draw, [signed(draw, "dpop")], [[], [signed(draw, "dpop"), signed(draw, "dpop")], [hostile_text()]], 15
    )
    headers += [("dpop", proof) for proof in proofs]
    return FacadeProbe(
        "dpop",
        pick(draw, "POST", ["GET"], 2),
        "/oauth/token",
        headers=tuple(form_headers(draw, 4) + headers),
        body=form_fields(draw, fields, 4),
        client=client,
        repeat=draw(st.integers(0, 9)) == 0,
    )


def authorization(draw: Draw, token: str) -> Any:
    """`Authorization` for `token`: its own scheme mostly (DPoP for a bound one), else the other one, an
    odd spelling, a damaged token, made-up text, or none."""
    scheme = "Bearer " if token == "unbound-token" else "DPoP "
    scheme = pick(draw, scheme, ["Bearer ", "DPoP ", "dpop ", "DPOP  ", "DPoP\t", "Basic ", "DPoP"], 20)
    value = pick(draw, Ref(token), [real(token, damage=100), hostile_text(), ""], 8)
    return pick(draw, Cat((scheme, value)), [None, Cat(("DPoP ", value, " ", value)), hostile_text()], 4)


def mcp_probe(draw: Draw) -> FacadeProbe:
    """`POST /mcp`, a tool call, with a bound token and a proof for it, or any near miss."""
    token = weighted(draw, [("bound-token", 6), ("enterprise-token", 2), ("unbound-token", 3)])
    tool = weighted(draw, [("whoami", 5), ("restock", 1)])
    message = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": tool, "arguments": {"item": "x"} if tool == "restock" else {}, "_meta": META},
    }
    headers: list[tuple[str, Any]] = [(name, tool if name == "mcp-name" else value) for name, value in CALL_HEADERS]
    header = authorization(draw, token)
    if header is not None:
        headers.append(("authorization", header))
    bound = token != "unbound-token"
    count = weighted(draw, [(1, 12), (0, 2 if bound else 6), (2, 1)])
    if not bound and count == 1 and draw(st.booleans()):
        count = 0
    for _ in range(count):
        proof = pick(
            draw,
            signed(draw, "dpop", token=token),
            [hostile_text(), "", signed(draw, "dpop", token=token, url=TOKEN_URL)],
            8,
        )
        headers.append(("dpop", proof))
    method = pick(draw, "POST", ["GET", "DELETE"], 4)
    return FacadeProbe(
        "dpop",
        method,
        "/mcp",
        headers=tuple(headers),
        body=message if method == "POST" else b"",
        client="agent",
        repeat=draw(st.integers(0, 9)) == 0,
    )


# -- metadata ---------------------------------------------------------------------------------------
METADATA_PATHS = (
    "/.well-known/oauth-authorization-server",
    "/.well-known/openid-configuration",
    "/.well-known/oauth-protected-resource/mcp",
    "/.well-known/oauth-protected-resource",
    "/.well-known/oauth-authorization-server/mcp",
    "/oauth/jwks",
)


@st.composite
def metadata_probes(draw: Draw) -> FacadeProbe:
    """The metadata documents with hostile methods, paths, queries and headers."""
    path = weighted(draw, [(METADATA_PATHS[0], 6), *((p, 1) for p in METADATA_PATHS[1:])])
    path = pick(
        draw, path, [st.sampled_from([path + "/", path.upper(), path + "%00", path + "/..", path + "/" + TAINT])], 8
    )
    query = ()
    if draw(st.integers(0, 5)) == 0:
        query = ((str(draw(st.sampled_from(["resource", "x", TAINT]))), draw(hostile_text())),)
    headers: list[tuple[str, Any]] = []
    for name, values in (
        ("accept", ["application/json", "text/html", "*/*", ""]),
        ("origin", ["https://evil.example", "null"]),
        ("authorization", ["DPoP x.y.z", "Bearer " + TAINT]),
        ("dpop", ["x.y.z"]),
        ("if-none-match", ['"x"', "*"]),
    ):
        if draw(st.integers(0, 4)) == 0:
            headers.append((name, draw(st.sampled_from(values) | hostile_text())))
    method = pick(draw, "GET", ["HEAD", "POST", "OPTIONS", "PUT"], 8)
    return FacadeProbe("metadata", method, path, query=query, headers=tuple(headers), body=b"")


def agent_probes(family: str) -> st.SearchStrategy[FacadeProbe]:
    strategies: dict[str, Any] = {"machine": machine_probes, "dpop": dpop_probes, "metadata": metadata_probes}
    result: st.SearchStrategy[FacadeProbe] = strategies[family]()
    return result


# -- the edge sweep ----------------------------------------------------------------------------------
HEADER_MEMBERS = ("alg", "typ", "kid", "crit")
JWKS = ("private", "other", "unknown", "oct", "missing", "numeric", "huge", "crv")


def carrying(kind: str, jwt: Signed, unavailable: bool = False) -> FacadeProbe:
    """A request that is valid but for `jwt`: a client_credentials request (`assertion`; `dpop-token`,
    with a proof), a jwt-bearer request (`id-jag`), a tool call with a bound token (`dpop-mcp`)."""
    valid = (("client_assertion_type", ASSERTION_TYPE), ("client_assertion", Signed("assertion")))
    if kind == "assertion":
        body = Form(
            (("grant_type", "client_credentials"), ("client_assertion_type", ASSERTION_TYPE), ("client_assertion", jwt))
        )
        return FacadeProbe("machine", "POST", "/oauth/token", headers=FORM_TYPE, body=body)
    if kind == "id-jag":
        body = Form((("grant_type", JWT_BEARER), ("assertion", jwt), *valid))
        return FacadeProbe("machine", "POST", "/oauth/token", headers=FORM_TYPE, body=body, unavailable=unavailable)
    if kind == "dpop-token":
        body = Form((("grant_type", "client_credentials"), *valid))
        return FacadeProbe("dpop", "POST", "/oauth/token", headers=(*FORM_TYPE, ("dpop", jwt)), body=body)
    headers = (*CALL_HEADERS, ("authorization", Cat(("DPoP ", Ref("bound-token")))), ("dpop", jwt))
    return FacadeProbe("dpop", "POST", "/mcp", headers=headers, body=CALL)


def edge_probes(kind: str, only: tuple[str, ...] = ()) -> list[FacadeProbe]:
    """Every member the facade reads of one kind of JWT (`assertion`, `id-jag`, `dpop-token`, `dpop-mcp`),
    each set once to every edge value, every near miss of its own and (times) every time around a window;
    for proofs also every kind of wrong `jwk` with each key type. Deterministic: what random drawing
    reaches rarely, every run reaches. `only`: just those claims."""
    jwt_kind = "dpop" if kind.startswith("dpop") else kind
    token = "bound-token" if kind == "dpop-mcp" else ""
    names, extra = CLAIMS[jwt_kind]
    probes = []
    for name in only or dict.fromkeys((*names, "exp", "iat", "nbf")):
        times = TIMES if name in ("exp", "iat", "nbf") else ()
        for value in (*EDGES, *extra.get(name, ()), *times):
            jwt = Signed(jwt_kind, claims=((name, value),), token=token)
            probes.append(carrying(kind, jwt, unavailable=value == DOWN_IDP))
    if only:
        return probes
    for name in (*HEADER_MEMBERS, *(("jwk",) if jwt_kind == "dpop" else ())):
        for value in EDGES:
            probes.append(carrying(kind, Signed(jwt_kind, header=((name, value),), token=token)))
    keys = ("right", "rsa", "ed") if jwt_kind == "dpop" else ("right",)
    for key in (*KEYS[jwt_kind], *keys):
        for jwk in (*JWKS, "public") if jwt_kind == "dpop" else ("public",):
            probes.append(carrying(kind, Signed(jwt_kind, key=key, jwk=jwk, token=token)))
    return probes
