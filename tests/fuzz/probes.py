"""What the fuzzer sends: hostile HTTP requests for `/mcp`, as target-independent `Probe`s.

Values only a running server knows (a live session of a given revision, an SSE event id it minted, a
sealed `requestState`, a task id, its own Host) are `Ref`s, which the target fills in, possibly damaged
(`Ref.mangle`), when it sends the probe. Each part of a request is right most of the time and wrong
sometimes, so shrinking goes back to a valid request with one fault.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from hypothesis import strategies as st

from tests.support.processes import ROOT

Json = Any
Draw = Callable[[st.SearchStrategy[Any]], Any]

# -- what the kit and the conformance app speak ---------------------------------------------------
MODERN = "2026-07-28"
LEGACY = ("2025-11-25", "2025-06-18", "2025-03-26")
FAKE_VERSIONS = ("2024-11-05", "1900-01-01", "2026-07-29", "2025-11-25 ", "latest", "", "2026-07-28\t")
META_VERSION = "io.modelcontextprotocol/protocolVersion"
META_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"
TASKS_EXTENSION = "io.modelcontextprotocol/tasks"
ACCEPT_BOTH = "application/json, text/event-stream"
CONFORMANCE = ROOT / "examples/conformance/server.py"
DOMAIN = "fuzz0api.execute-api.us-east-1.amazonaws.com"
LOCAL_HOST = "127.0.0.1:8000"


def words(text: str) -> tuple[str, ...]:
    return tuple(text.split())


MODERN_METHODS = words(
    "server/discover tools/list tools/call resources/list resources/templates/list resources/read prompts/list"
    " prompts/get completion/complete subscriptions/listen tasks/get tasks/update tasks/cancel ping"
)
LEGACY_METHODS = words(
    "initialize ping tools/list tools/call resources/list resources/templates/list resources/read"
    " resources/subscribe resources/unsubscribe prompts/list prompts/get completion/complete logging/setLevel"
    " tasks/get tasks/list tasks/cancel tasks/result"
)
NOTIFICATIONS = words(
    "notifications/initialized notifications/cancelled notifications/roots/list_changed notifications/progress"
    " notifications/message notifications/elicitation/complete"
)
CLIENT_METHODS = ("sampling/createMessage", "elicitation/create", "roots/list", "server/discover")
NEAR_MISSES = ("TOOLS/LIST", "tools/list ", "tools//call", "tools/call\x00", "/tools/list", "tools", "rpc.discover")

SAFE_TOOLS = words(
    "test_simple_text test_image_content test_audio_content test_embedded_resource test_multiple_content_types"
    " test_tool_with_logging test_tool_with_progress test_error_handling test_reconnection json_schema_2020_12_tool"
    " test_missing_capability test_trigger_tool_change test_trigger_prompt_change test_x_mcp_header"
    " test_streaming_elicitation test_logging_tool greet"
)
"""Tools that return promptly everywhere and ask the client nothing."""
ASKING_TOOLS = words(
    "test_sampling test_elicitation test_elicitation_sep1034_defaults test_elicitation_sep1330_enums"
    " test_input_required_result_elicitation test_input_required_result_sampling"
    " test_input_required_result_list_roots test_input_required_result_request_state"
    " test_input_required_result_multiple_inputs test_input_required_result_multi_round"
    " test_input_required_result_tampered_state test_input_required_result_capabilities test_tool_with_task"
)
"""Tools that ask the client: they suspend (buffered, 2026) but wait for an answer on a live legacy call."""
TASK_TOOLS = ("failing_job", "protocol_error_job", "confirm_delete", "multi_input")
EXCLUDED_TOOLS = ("slow_compute",)
"""Sleeps `seconds` (default 3) even outside a task: never called, so no example takes seconds."""
SAFE_PROMPTS = words(
    "test_simple_prompt test_prompt_with_arguments test_prompt_with_embedded_resource test_prompt_with_image"
)
ASKING_PROMPTS = ("test_input_required_result_prompt",)
RESOURCES = ("test://static-text", "test://static-binary", "test://watched-resource", "test://template/7/data")
INTERESTING_KEYS = (
    *words("_meta name uri arguments task ttl requestState inputResponses cursor protocolVersion capabilities"),
    *words("clientInfo requestId progressToken level taskId prompt message region"),
    META_VERSION,
    META_CAPABILITIES,
)


# -- probes -------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Ref:
    """A value the target fills in when it sends a probe.

    kind: `session` (the live session of `version`), `dead-session` (one that was deleted), `host` and
    `origin` (the target's own), `event` (an SSE event id it minted), `input` (the id of a request it
    sent to a client), `state` (a sealed `requestState`), `task` (a task id). `pick` chooses among
    several; `mangle` damages the value (see `mangle`)."""

    kind: str
    version: str = ""
    pick: int = 0
    mangle: str = ""


@dataclass(frozen=True)
class Probe:
    """One HTTP request to `/mcp`. `body` is raw bytes, or a JSON tree that may hold `Ref`s."""

    family: str
    """`modern`, `legacy` or `raw`: the generator that made it (reported per family)."""
    method: str
    headers: tuple[tuple[str, Any], ...]
    body: Any = b""


@dataclass(frozen=True)
class Raw:
    """A body sent byte for byte."""

    data: bytes


MANGLES = ("truncate", "flip", "append", "upper", "nonascii", "double", "long", "dots", "empty")


def mangle(text: str, how: str, pick: int = 0) -> str:
    """Damage a real value: cut it, change a character, grow it, make it non-ASCII."""
    if not how or not text:
        return text
    at = pick % len(text)
    damaged = {
        "truncate": text[: len(text) // 2],
        "flip": text[:at] + ("A" if text[at] != "A" else "B") + text[at + 1 :],
        "append": text + "x",
        "upper": text.upper(),
        "nonascii": text[:-1] + "\u00e9",
        "double": text + text,
        "long": text + "A" * 3000,
        "dots": text.replace(".", ".."),
        "empty": "",
    }
    return damaged.get(how, text)


def encoded(value: str) -> str:
    """The `=?base64?...?=` form of a header value."""
    return "=?base64?" + base64.b64encode(value.encode("utf-8", "surrogatepass")).decode() + "?="


BAD_ENCODINGS = (
    "=?base64?not*base64?=",
    "=?base64?dGVzdA?=",
    "=?base64??=",
    "=?BASE64?dGVzdA==?=",
    "=?base64?" + base64.b64encode(b"\xff\xfe\xfd").decode() + "?=",
    "=?base64?" + base64.b64encode(b"a\x00b").decode() + "?=",
    "=?base64?dGVzdA==",
    "=?base64?====?=",
)


# -- choosing: mostly right, sometimes wrong; shrinking goes back to right -------------------------
def option(draw: Draw, value: Any) -> Any:
    """A strategy is drawn from; anything else is itself."""
    return draw(value) if isinstance(value, st.SearchStrategy) else value


def pick(draw: Draw, right: Any, wrongs: list[Any], percent: int) -> Any:
    """`right`, or, `percent` times in a hundred, one of `wrongs` (None drops a header)."""
    if draw(st.integers(0, 99)) < 100 - percent:
        return option(draw, right)
    return option(draw, draw(st.sampled_from(wrongs)))


def weighted(draw: Draw, choices: list[tuple[Any, int]]) -> Any:
    """One of `choices` with the given weights (earlier ones are what shrinking prefers)."""
    return option(draw, draw(st.sampled_from([value for value, weight in choices for _ in range(weight)])))


def real(kind: str, version: str = "", damage: int = 25) -> st.SearchStrategy[Ref]:
    """A reference to a real value of the target, damaged `damage` times in a hundred."""
    return st.builds(
        lambda index, roll, how: Ref(kind, version, index, how if roll >= 100 - damage else ""),
        st.integers(0, 40),
        st.integers(0, 99),
        st.sampled_from(MANGLES),
    )


# -- JSON values --------------------------------------------------------------------------------
short_text = st.text(max_size=16)
surrogates = st.text(st.characters(categories=["Cs"]), min_size=1, max_size=3)
LONG_SIZES = (255, 256, 257, 513, 1024, 1025, 2000, 2049, 5000, 70_000)
long_text = st.builds(
    lambda unit, size: (unit * size)[:size],
    st.sampled_from(["a", "\u00e9", "\u2028", "\U0001f600", "\\", '"', "\x00", ".~", "%2F"]),
    st.sampled_from(LONG_SIZES) | st.integers(100, 3000),
)
texts = short_text | st.sampled_from(INTERESTING_KEYS + LEGACY_METHODS + MODERN_METHODS) | long_text | surrogates
huge_numbers = st.sampled_from([2**63, -(2**63) - 1, 2**64, 10**30, -(10**40), 1e308, -1e-308, 5e-324, 0.0, -0.0])
scalars = st.none() | st.booleans() | st.integers() | huge_numbers | st.floats(allow_nan=False) | texts
json_values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.sampled_from(INTERESTING_KEYS) | short_text, inner),
    max_leaves=10,
)
json_objects = st.dictionaries(st.sampled_from(INTERESTING_KEYS) | short_text, json_values, max_size=5)
odd_ids: st.SearchStrategy[Json] = (
    st.sampled_from([0, -1, 2**53, 2**63, 2**64, 10**30, "", "0", "1", None, True, 1.5, [], {}])
    | long_text
    | surrogates
    | st.floats()
    | st.lists(scalars, max_size=2)
    | st.dictionaries(short_text, scalars, max_size=2)
)
request_ids = st.integers(0, 10**6) | short_text | odd_ids
header_text = st.text(st.characters(min_codepoint=0x20, max_codepoint=0xFF, exclude_characters="\x7f"), max_size=24)
long_header_text = st.builds(
    lambda unit, size: (unit * size)[:size],
    st.sampled_from(["a", "\u00e9", "-", "%2F", ".", "~"]),
    st.sampled_from(LONG_SIZES) | st.integers(100, 3000),
)


# -- params per method ----------------------------------------------------------------------------
def arguments(draw: Draw) -> Json:
    named = st.fixed_dictionaries(
        {},
        optional={
            "prompt": texts,
            "message": texts,
            "region": texts | st.integers() | st.booleans(),
            "name": texts,
            "filename": texts,
            "a": st.integers(),
        },
    )
    return pick(draw, named, [json_objects, json_values], 20)


def tool_call(draw: Draw, tools: tuple[str, ...]) -> dict[str, Json]:
    params: dict[str, Json] = {"name": pick(draw, st.sampled_from(tools), [texts, json_values], 10)}
    if draw(st.integers(0, 99)) >= 20:
        params["arguments"] = arguments(draw)
    if draw(st.integers(0, 99)) >= 85:
        params["task"] = pick(
            draw, st.fixed_dictionaries({}, optional={"ttl": st.integers(-5, 10**12)}), [json_values], 20
        )
    if draw(st.integers(0, 99)) >= 70:
        params["requestState"] = pick(draw, real("state", damage=50), [texts, json_values], 25)
    if draw(st.integers(0, 99)) >= 75:
        names = st.sampled_from(["user_name", "confirm", "step1", "capital_question", "client_roots"]) | short_text
        answers = st.dictionaries(names, st.just({"action": "accept", "content": {"name": "x"}}) | json_values)
        params["inputResponses"] = pick(draw, answers, [json_values], 20)
    return params


@st.composite
def params_for(draw: Draw, method: str, tools: tuple[str, ...], prompts: tuple[str, ...]) -> Json:
    """Plausible params for `method` (real names, real ids), random JSON one time in twelve."""
    if draw(st.integers(0, 11)) == 11:
        return draw(json_values)
    uris = st.sampled_from(RESOURCES) | st.builds("test://template/{}/data".format, texts)
    if method == "tools/call":
        return tool_call(draw, tools)
    if method in ("resources/read", "resources/subscribe", "resources/unsubscribe"):
        return {"uri": pick(draw, uris, [texts, json_values], 15)}
    if method == "prompts/get":
        return {"name": pick(draw, st.sampled_from(prompts), [texts], 10), "arguments": draw(json_objects)}
    if method == "completion/complete":
        ref = {"type": pick(draw, st.sampled_from(["ref/prompt", "ref/resource"]), [texts], 15), "name": draw(texts)}
        return {"ref": ref, "argument": {"name": draw(texts), "value": draw(texts | json_values)}}
    if method == "logging/setLevel":
        return {"level": pick(draw, st.sampled_from(["debug", "info", "emergency"]), [texts, json_values], 30)}
    if method.startswith("tasks/"):
        extra = st.fixed_dictionaries({}, optional={"inputResponses": json_objects})
        return {"taskId": pick(draw, real("task"), [texts, json_values], 40), **draw(extra)}
    if method == "subscriptions/listen":
        return {"notifications": pick(draw, listen_filter(), [json_values], 15)}
    if method == "initialize":
        return initialize_params(draw)
    if method == "notifications/cancelled":
        rid = weighted(draw, [(st.integers(0, 10**6), 3), (short_text, 2), (long_text, 3), (odd_ids, 2)])
        return {"requestId": rid, "reason": draw(texts)}
    if method.endswith("/list"):
        return draw(st.fixed_dictionaries({}, optional={"cursor": texts | json_values}))
    return draw(json_objects)


def listen_filter() -> st.SearchStrategy[Json]:
    return st.fixed_dictionaries(
        {},
        optional={
            "toolsListChanged": st.booleans() | json_values,
            "promptsListChanged": st.booleans(),
            "resourceSubscriptions": st.lists(st.sampled_from(RESOURCES) | texts, max_size=3) | json_values,
        },
    )


def initialize_params(draw: Draw) -> Json:
    capabilities = st.fixed_dictionaries(
        {},
        optional={"sampling": st.just({}), "elicitation": json_objects, "roots": json_objects, "tasks": json_objects},
    )
    version = st.sampled_from(LEGACY)
    return {
        "protocolVersion": pick(draw, version, [st.sampled_from((MODERN, *FAKE_VERSIONS)), json_values], 25),
        "capabilities": pick(draw, capabilities, [json_values], 15),
        "clientInfo": pick(draw, st.fixed_dictionaries({"name": texts, "version": texts}), [json_values], 15),
    }


# -- envelopes ----------------------------------------------------------------------------------
@st.composite
def envelope(draw: Draw, method: Json, params: Json, *, notification: bool = False) -> Json:
    """A JSON-RPC request (or notification), broken in one way one time in ten."""
    message: dict[str, Json] = {"jsonrpc": "2.0", "method": method}
    if params is not None:
        message["params"] = params
    if not notification:
        message["id"] = pick(draw, st.integers(0, 10**6) | short_text, [odd_ids], 10)
    breakage = pick(draw, "none", ["jsonrpc", "method", "params", "extra", "response", "drop"], 10)
    if breakage == "jsonrpc":
        message["jsonrpc"] = draw(st.sampled_from(["1.0", 2.0, None, "2.0 ", ""]) | json_values)
    elif breakage == "method":
        message["method"] = draw(json_values)
    elif breakage == "params":
        message["params"] = draw(json_values)
    elif breakage == "extra":
        message[draw(st.sampled_from(["result", "error", "id"]) | short_text)] = draw(json_values)
    elif breakage == "response":
        message.pop("method")
        message[draw(st.sampled_from(["result", "error"]))] = draw(json_values)
    elif breakage == "drop":
        message.pop(draw(st.sampled_from(sorted(message))))
    return message


def client_response(draw: Draw) -> Json:
    """A client's answer to a server-to-client request: to one the target sent, or to none."""
    rid = pick(draw, real("input", damage=30), [st.builds("s-{}".format, short_text), request_ids], 30)
    result = st.just({"action": "accept", "content": {"name": "x"}}) | json_objects
    error = st.fixed_dictionaries({"code": st.integers(), "message": texts}) | json_values
    body = pick(draw, st.builds(lambda r: {"result": r}, result), [st.builds(lambda e: {"error": e}, error)], 25)
    return {"jsonrpc": "2.0", "id": rid, **body}


# -- headers ------------------------------------------------------------------------------------
def common_headers(draw: Draw) -> list[tuple[str, Any]]:
    """Accept, Content-Type, Host and Origin: mostly what a real client sends. Hosts are ones Mangum can
    split into a name and a numeric port (it raises on others, before the kit sees the request)."""
    accepts = ["application/json", "text/event-stream", "*/*", "text/html", "application/*, text/*", None, ""]
    accept = pick(draw, ACCEPT_BOTH, [*accepts, "application/json;q=0.1, text/event-stream;q=0", header_text], 12)
    content_type = pick(draw, "application/json", [None, "text/plain", "application/json; charset=utf-8"], 10)
    host = pick(draw, Ref("host"), [None, "evil.example.com", "localhost", "EVIL.example.com:443"], 4)
    evil = ["https://evil.example.com", "null", st.builds("https://{}".format, header_text)]
    origin = pick(draw, None, [Ref("origin"), Ref("origin"), *evil], 8)
    pairs = [("accept", accept), ("content-type", content_type), ("host", host), ("origin", origin)]
    return [(name, value) for name, value in pairs if value is not None]


def session_ref(draw: Draw, version: str) -> Any:
    """An `MCP-Session-Id`: the live session of `version` mostly, else dead, damaged or invented."""
    wrongs = [
        Ref("dead-session"),
        real("session", version, damage=100),
        st.builds("{:032d}".format, st.integers(0, 10**9)),
        long_header_text,
        header_text,
        "",
    ]
    return pick(draw, Ref("session", version), wrongs, 12)


def version_header(draw: Draw, version: str) -> Any:
    """`MCP-Protocol-Version` for a legacy request: the session's revision mostly, absent sometimes
    (2025-03-26 clients send none)."""
    wrongs = [None, None, None, MODERN, encoded(version), st.sampled_from(LEGACY), st.sampled_from(FAKE_VERSIONS)]
    return pick(draw, version, [*wrongs, header_text], 20)


def last_event_id(draw: Draw) -> Any:
    invented = [
        header_text,
        long_header_text,
        st.builds(
            "changes~{:017d}-{}".format, st.integers(0, 10**17 - 1), st.from_regex(r"[a-z0-9]{0,8}", fullmatch=True)
        ),
        st.builds("call~{}.1.deadbeef".format, st.from_regex(r"[A-Za-z0-9_-]{0,12}", fullmatch=True)),
        st.builds("taskresult~{}~MQ.1.abcdef01".format, st.from_regex(r"[A-Za-z0-9_-]{0,40}", fullmatch=True)),
        "live~0123456789abcdef.1.0badf00d",
    ]
    return pick(draw, real("event", damage=40), invented, 25)


def routing_headers(draw: Draw, message: Json) -> list[tuple[str, Any]]:
    """2026 headers derived from the body: right mostly, else encoded, wrong, missing or malformed."""
    method, params = _method_and_params(message)
    meta = params.get("_meta") if isinstance(params, dict) else None
    claimed = meta.get(META_VERSION) if isinstance(meta, dict) else None
    headers = [
        (
            "mcp-protocol-version",
            _variant(draw, claimed if isinstance(claimed, str) else MODERN, [*LEGACY, *FAKE_VERSIONS]),
        ),
        ("mcp-method", _variant(draw, method if isinstance(method, str) else "", list(MODERN_METHODS))),
    ]
    name = params.get("name", params.get("uri", params.get("taskId"))) if isinstance(params, dict) else None
    if name is not None or draw(st.integers(0, 9)) == 9:
        headers.append(("mcp-name", _variant(draw, name if isinstance(name, str | Ref) else "", ["other_tool"])))
    arguments = params.get("arguments") if isinstance(params, dict) else None
    region = arguments.get("region") if isinstance(arguments, dict) else None
    if region is not None or draw(st.integers(0, 9)) == 9:
        headers.append(("mcp-param-region", _variant(draw, _as_header(region), ["eu", "1", "true"])))
    if draw(st.integers(0, 9)) == 9:
        headers.append((f"mcp-param-{draw(st.from_regex(r'[a-z0-9-]{1,12}', fullmatch=True))}", draw(header_text)))
    return [(name, value) for name, value in headers if value is not None]


def _as_header(value: Json) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value) if value is not None else ""


def _variant(draw: Draw, right: str | Ref, wrong: list[str]) -> Any:
    """A header value for `right`: itself mostly, else encoded, wrong, missing, malformed or huge."""
    wrongs: list[Any] = [None, st.sampled_from(wrong), st.sampled_from(BAD_ENCODINGS), header_text]
    if isinstance(right, str):
        wrongs += [encoded(right), encoded(right), "x" * 9000]
    return pick(draw, right, wrongs, 8)


def _method_and_params(message: Json) -> tuple[Json, Json]:
    if isinstance(message, dict):
        return message.get("method"), message.get("params")
    return None, None


# -- probes per family ----------------------------------------------------------------------------
def modern_meta(draw: Draw) -> Json:
    capabilities: st.SearchStrategy[dict[str, Json]] = st.fixed_dictionaries(
        {},
        optional={
            "sampling": st.just({}),
            "elicitation": st.just({}),
            "roots": st.just({}),
            "extensions": st.just({TASKS_EXTENSION: {}}) | json_objects,
        },
    )
    meta = {META_VERSION: MODERN, META_CAPABILITIES: draw(capabilities)}
    damage = pick(draw, "none", ["version", "capabilities", "drop", "extra"], 10)
    if damage == "version":
        meta[META_VERSION] = draw(st.sampled_from(LEGACY + FAKE_VERSIONS) | json_values)
    elif damage == "capabilities":
        meta[META_CAPABILITIES] = draw(json_values)
    elif damage == "drop":
        meta.pop(draw(st.sampled_from(sorted(meta))))
    elif damage == "extra":
        key = draw(st.sampled_from(["io.modelcontextprotocol/logLevel", "progressToken"]) | short_text)
        meta[key] = draw(json_values)
    return meta


MODERN_WEIGHTS = [("tools/call", 10), *((m, 1) for m in MODERN_METHODS if m != "tools/call")]


@st.composite
def modern_probes(draw: Draw, tools: tuple[str, ...], prompts: tuple[str, ...]) -> Probe:
    """2026-07-28 requests: `_meta` and routing headers, mostly right, each part sometimes wrong."""
    others = [st.sampled_from(("initialize", "logging/setLevel", "tasks/result", *NEAR_MISSES)), short_text]
    method = pick(draw, weighted(draw, MODERN_WEIGHTS), others, 8)
    params = draw(params_for(method, tools, prompts))
    if isinstance(params, dict) and draw(st.integers(0, 99)) < 95:
        params = {**params, "_meta": modern_meta(draw)}
    notification = draw(st.integers(0, 99)) >= 95
    message = draw(envelope(method, params, notification=notification))
    headers = common_headers(draw) + routing_headers(draw, message)
    if draw(st.integers(0, 99)) >= 92:
        headers.append(("mcp-session-id", session_ref(draw, draw(st.sampled_from(LEGACY)))))
    verb = pick(draw, "POST", ["GET", "DELETE", "PUT"], 5)
    return Probe("modern", verb, tuple(headers), message if verb == "POST" else b"")


LEGACY_KINDS = [("request", 10), ("initialize", 2), ("notification", 3), ("response", 2), ("batch", 3)]
LEGACY_WEIGHTS = [("tools/call", 8), *((m, 1) for m in LEGACY_METHODS if m != "tools/call")]
NOTIFICATION_WEIGHTS = [("notifications/cancelled", 5), *((m, 1) for m in NOTIFICATIONS)]


@st.composite
def legacy_probes(draw: Draw, tools: tuple[str, ...], prompts: tuple[str, ...]) -> Probe:
    """Session-era requests: initialize, calls on sessions, notifications, client answers, batches, GET
    (with `Last-Event-ID`) and DELETE, on sessions of every legacy revision."""
    version = draw(st.sampled_from(LEGACY))
    verb = weighted(draw, [("POST", 15), ("GET", 3), ("DELETE", 1), ("PUT", 1)])
    kind = weighted(draw, LEGACY_KINDS)
    headers = common_headers(draw)
    sent_version = version_header(draw, version)
    if sent_version is not None:
        headers.append(("mcp-protocol-version", sent_version))
    if kind != "initialize" or draw(st.integers(0, 9)) == 9:
        session = pick(draw, session_ref(draw, version), [None], 4)
        if session is not None:
            headers.append(("mcp-session-id", session))
    if verb == "GET" and draw(st.integers(0, 99)) < 75:
        headers.append(("last-event-id", last_event_id(draw)))
    body = legacy_body(draw, kind, tools, prompts) if verb in ("POST", "PUT") else b""
    return Probe("legacy", verb, tuple(headers), body)


def legacy_body(draw: Draw, kind: str, tools: tuple[str, ...], prompts: tuple[str, ...]) -> Json:
    if kind == "initialize":
        return draw(envelope("initialize", initialize_params(draw)))
    if kind == "response":
        return client_response(draw)
    if kind == "batch":
        return batch(draw, tools, prompts)
    return legacy_message(draw, kind, tools, prompts)


def legacy_message(draw: Draw, kind: str, tools: tuple[str, ...], prompts: tuple[str, ...]) -> Json:
    if kind == "notification":
        method = pick(draw, weighted(draw, NOTIFICATION_WEIGHTS), [short_text], 10)
        return draw(envelope(method, draw(params_for(method, tools, prompts)), notification=True))
    others = [st.sampled_from(CLIENT_METHODS + NEAR_MISSES), short_text]
    method = pick(draw, weighted(draw, LEGACY_WEIGHTS), others, 8)
    return draw(envelope(method, draw(params_for(method, tools, prompts))))


def batch(draw: Draw, tools: tuple[str, ...], prompts: tuple[str, ...]) -> Json:
    """2025-03-26 batches: requests, notifications and answers; empty, nested or holding non-objects."""
    members = [("request", 6), ("notification", 2), ("response", 1), ("junk", 1), ("nested", 1)]
    items: list[Json] = []
    for member in draw(st.lists(st.sampled_from([m for m, w in members for _ in range(w)]), max_size=5)):
        if member == "response":
            items.append(client_response(draw))
        elif member == "junk":
            items.append(draw(scalars))
        elif member == "nested":
            items.append([legacy_message(draw, "request", tools, prompts)] if draw(st.booleans()) else [])
        else:
            items.append(legacy_message(draw, member, tools, prompts))
    return distinct_ids(items)


def distinct_ids(items: list[Json]) -> list[Json]:
    """Requests of one batch get distinct ids: the recorder pairs responses with requests by id, so it
    cannot check the answers to two requests sharing one."""
    seen: set[tuple[type, Json]] = set()
    for number, item in enumerate(items):
        if isinstance(item, dict) and "method" in item and "id" in item:
            rid = item["id"]
            key = (type(rid), json.dumps(rid, sort_keys=True))
            if key in seen:
                item["id"] = rid = 10**7 + number
                key = (int, json.dumps(rid))
            seen.add(key)
    return items


# -- raw bodies ---------------------------------------------------------------------------------
VALID = b'{"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}'


def nested(depth: int, opener: str, closed: bool) -> bytes:
    """`opener` repeated `depth` times, closed again (valid JSON when it opens arrays or objects) or not."""
    closer = {"[": "]", '{"a":': "}", "[{": "}]"}.get(opener, "") if closed else ""
    return (opener * depth + "1" + closer * depth).encode()


depths = st.sampled_from([10, 500, 999, 1000, 5000, 50_000]) | st.integers(1, 60_000)
raw_bodies: st.SearchStrategy[bytes] = st.one_of(
    st.binary(max_size=64),
    st.sampled_from([b"", b" ", b"null", b"[]", b"[[]]", b"{}", b'"hello"', b"1", b"\xef\xbb\xbf" + VALID, VALID]),
    st.builds(lambda cut: VALID[:cut], st.integers(0, len(VALID) - 1)),
    st.builds(nested, depths, st.sampled_from(["[", '{"a":', "[{", '["']), st.booleans()),
    st.builds(lambda n: b'{"jsonrpc":"2.0","id":' + b"9" * n + b',"method":"ping"}', st.integers(1, 20_000)),
    st.sampled_from(
        [
            b'{"jsonrpc":"2.0","id":1e999999,"method":"ping"}',
            b'{"jsonrpc":"2.0","id":NaN,"method":"ping"}',
            b'{"jsonrpc":"2.0","id":-Infinity,"method":"ping"}',
            b'{"jsonrpc":"2.0","id":1,"id":"x","method":"ping"}',
            b'{"jsonrpc":"2.0","id":"\\ud800","method":"ping"}',
            b'{"jsonrpc":"2.0","id":1,"method":"p\xffing"}',
            b'{"jsonrpc":"2.0","id":"\xc3\x28","method":"ping"}',
            b'{"jsonrpc":"2.0","id":1,"method":"ping"}\x00',
            b'{"jsonrpc":"2.0","id":1,"method":"ping"} {"jsonrpc":"2.0","id":2,"method":"ping"}',
            b" " * (1 << 20) + b"{}",
        ]
    ),
    st.builds(lambda at, junk: VALID[:at] + junk + VALID[at:], st.integers(0, len(VALID)), st.binary(max_size=4)),
)


@st.composite
def raw_probes(draw: Draw) -> Probe:
    """Garbage: random bytes, cut JSON, deep nesting, huge numbers, invalid UTF-8; any HTTP method; any
    mix of MCP headers."""
    verb = weighted(draw, [("POST", 6), ("GET", 1), ("DELETE", 1), ("PUT", 1), ("PATCH", 1), ("OPTIONS", 1)])
    headers = common_headers(draw)
    version = draw(st.sampled_from(LEGACY))
    optional: dict[str, Callable[[], Any]] = {
        "mcp-protocol-version": lambda: draw(st.sampled_from((MODERN, *LEGACY, *FAKE_VERSIONS, *BAD_ENCODINGS))),
        "mcp-session-id": lambda: session_ref(draw, version),
        "mcp-method": lambda: draw(st.sampled_from(MODERN_METHODS) | header_text),
        "last-event-id": lambda: last_event_id(draw),
        "content-length": lambda: draw(st.sampled_from(["0", "-1", "99999999999", "abc", "1"])),
    }
    for name, value in optional.items():
        if draw(st.integers(0, 3)) == 3:
            headers.append((name, value()))
    return Probe("raw", verb, tuple(headers), Raw(draw(raw_bodies)))


def probes_for(target: str, family: str) -> st.SearchStrategy[Probe]:
    """The probes one target gets: on the streaming server a legacy call that asks the client waits for
    an answer, so legacy probes there use only tools and prompts that ask nothing."""
    if family == "raw":
        return raw_probes()
    if family == "auth":  # the auth targets: hostile tokens and Mcp-Param values against auth `jwt`
        from .auth_probes import auth_probes

        return auth_probes()
    if family == "modern":
        return modern_probes(SAFE_TOOLS + ASKING_TOOLS + TASK_TOOLS, SAFE_PROMPTS + ASKING_PROMPTS)
    if target == "streaming":
        return legacy_probes(SAFE_TOOLS + TASK_TOOLS, SAFE_PROMPTS)
    return legacy_probes(SAFE_TOOLS + ASKING_TOOLS + TASK_TOOLS, SAFE_PROMPTS + ASKING_PROMPTS)
