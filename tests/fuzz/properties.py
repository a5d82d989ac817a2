"""What the fuzzer checks, per exchange: no 5xx and no exception escaping the app ("5xx"); no traceback,
exception repr or source path the request did not itself contain ("leak"); every JSON-RPC message valid
against the schema of its revision, as `tests/support/recorder.py` decides it ("schema"); a request
answered 4xx changes no stored state ("state"); no unexpected exception inside the kit, logged or
answered as -32603 "Internal error" ("internal"); every key the stores are asked for fits DynamoDB's key
limits ("storage-key"); batches only on 2025-03-26 sessions and responses only to ids the request
carried ("protocol"); no request other than an open stream left hanging ("hang"); response headers of at
most 8 KB in all that never echo a made-up value of the request (`auth_probes.TAINT`) ("header").

`run_probe` sends one probe and returns what every property found; the tests (`test_fuzz.py`) and the
long run (`bench/fuzz.py`) share it.
"""

from __future__ import annotations

import base64
import contextlib
import json
import re
from dataclasses import dataclass, field

from tests.support.recorder import Recorder

from .auth_probes import TAINT
from .probes import Json, Probe
from .targets import CATEGORIES, Finding, Outcome, Target, state_changes

# -- properties ---------------------------------------------------------------------------------------
LEAK_PATTERNS = (
    re.compile(r"Traceback \(most recent call last\)"),
    re.compile(r'File \\?"'),
    re.compile(r"\b[A-Z][A-Za-z0-9_]*(?:Error|Exception)\b(?::|\()"),
    re.compile(r"lambda_mcp[/.\\]"),
    re.compile(r"site-packages"),
    re.compile(r"\.py\b\\?\"?, line \d+"),
    re.compile(r"<[A-Za-z_][\w.]* object at 0x[0-9a-f]+>"),
)


def run_probe(target: Target, probe: Probe) -> tuple[Outcome, list[Finding]]:
    """Send one probe and check every property; the findings are empty when all hold."""
    outcome = target.send(probe)
    return outcome, check(target.recorder, outcome)


def check(recorder: Recorder, outcome: Outcome) -> list[Finding]:
    """Every property of one exchange; `recorder` knows the revisions of earlier sessions."""
    findings = [Finding("5xx", f"escaped the app: {text}") for text in outcome.escaped]
    findings += [Finding("internal", f"logged: {text}") for text in outcome.logged]
    findings += [Finding("storage-key", text) for text in outcome.key_problems]
    if outcome.status is None:
        if not outcome.open_stream:
            findings.append(Finding("hang", f"no answer after {outcome.elapsed:.1f} s"))
        return findings
    if outcome.status >= 500:
        findings.append(Finding("5xx", f"HTTP {outcome.status}"))
    findings += [Finding("header", text) for text in header_rules(outcome)]
    findings += [Finding("leak", text) for text in leaks(outcome)]
    messages, problems = schema_check(recorder, outcome)
    findings += [Finding("schema", text) for text in problems]
    findings += [Finding("internal", text) for text in internal_errors(messages)]
    findings += [Finding("protocol", text) for text in protocol_rules(outcome, messages)]
    if 400 <= outcome.status < 500:
        findings += [
            Finding("state", f"HTTP {outcome.status} changed {text}")
            for text in state_changes(outcome.before, outcome.after)
        ]
    return findings


MAX_HEADER_BYTES = 8192


def header_rules(outcome: Outcome) -> list[str]:
    """Response headers of at most 8 KB in all, none of them holding a value the fuzzer made up."""
    found = []
    size = sum(len(name) + len(value) + 4 for name, value in outcome.headers.items())
    if size > MAX_HEADER_BYTES:
        found.append(f"response headers take {size} bytes (over {MAX_HEADER_BYTES})")
    for name, value in outcome.headers.items():
        if TAINT in value:
            found.append(f"the {name} header echoes request input: {value[:200]!r}")
    return found


def leaks(outcome: Outcome) -> list[str]:
    """Internal text in the response that the request did not carry itself."""
    response = outcome.body.decode("utf-8", "replace")
    corpus = request_corpus(outcome)
    found = []
    for pattern in LEAK_PATTERNS:
        for match in pattern.finditer(response):
            if not any(match.group(0) in text for text in corpus):
                found.append(f"{match.group(0)!r} in {response[max(0, match.start() - 80) : match.end() + 80]!r}")
    return found


def request_corpus(outcome: Outcome) -> list[str]:
    """The request as text, raw, JSON-decoded and with encoded headers decoded: echoes are not leaks."""
    body = outcome.request_body.decode("utf-8", "replace")
    corpus = [body, json.dumps(body)]
    with contextlib.suppress(ValueError, RecursionError):
        decoded = json.loads(outcome.request_body)
        corpus += [json.dumps(decoded, ensure_ascii=False), json.dumps(decoded)]
    for value in outcome.request_headers.values():
        corpus += [value, json.dumps(value)]
        found = re.match(r"^=\?base64\?(.*)\?=$", value.strip())
        if found:
            with contextlib.suppress(ValueError):
                text = base64.b64decode(found.group(1)).decode("utf-8", "replace")
                corpus += [text, json.dumps(text)]
    return corpus


def schema_check(recorder: Recorder, outcome: Outcome) -> tuple[list[Json], list[str]]:
    """The server's messages and the schema violations the recorder found in them."""
    seen = len(recorder.violations)
    try:
        messages = recorder.exchange(
            outcome.request_headers,
            hashable_ids(outcome.request_body),
            outcome.status or 0,
            outcome.headers,
            outcome.body,
        )
    except KeyError as exc:  # schema.py: the message's type does not exist in that revision
        return [], [f"a message of a type its revision lacks: {exc}: {outcome.body[:300]!r}"]
    except (TypeError, RecursionError) as exc:
        return [], [f"the recorder could not read the exchange: {type(exc).__name__}: {exc}"]
    return messages, recorder.violations[seen:]


def hashable_ids(body: bytes) -> bytes:
    """The request body with list and object ids replaced (the recorder keys on ids; the server refuses
    such ids and never echoes them, so what it remembers for them is never used)."""
    try:
        decoded = json.loads(body)
    except ValueError:
        return body
    except RecursionError:  # the recorder's own json.loads would raise too: it gets no requests to read
        return b""
    items = decoded if isinstance(decoded, list) else [decoded]
    changed = False
    for item in items:
        if isinstance(item, dict) and isinstance(item.get("id"), (list, dict)):
            item["id"] = "<unhashable id>"
            changed = True
    return json.dumps(decoded).encode() if changed else body


def internal_errors(messages: list[Json]) -> list[str]:
    """-32603 "Internal error": the dispatcher's answer to an exception nobody expected."""
    found = []
    for message in messages:
        error = message.get("error") if isinstance(message, dict) else None
        if isinstance(error, dict) and error.get("code") == -32603 and error.get("message") == "Internal error":
            found.append(f"answered -32603 Internal error: {json.dumps(message)[:200]}")
    return found


def protocol_rules(outcome: Outcome, messages: list[Json]) -> list[str]:
    """Batches only on 2025-03-26 sessions (2025-06-18 removed them); a POST answers only the ids it sent
    (a GET that resumes a call's stream replays that call's response, whatever its body)."""
    found = []
    is_array = outcome.body.lstrip().startswith(b"[") and outcome.headers.get("content-type", "").startswith(
        "application/json"
    )
    if is_array and outcome.session_version not in (None, "2025-03-26"):
        found.append(f"a batch was served on a {outcome.session_version} session: {outcome.body[:200]!r}")
    sent = request_ids_of(outcome.request_body)
    if sent is None or outcome.method != "POST":
        return found
    for message in messages:
        if isinstance(message, dict) and "method" not in message and "id" in message and not echoes(message, sent):
            found.append(f"answered id {str(message['id'])[:80]!r}, which the request did not carry")
    return found


def echoes(message: dict[str, Json], sent: list[Json]) -> bool:
    return any(message["id"] == rid and type(message["id"]) is type(rid) for rid in sent)


def request_ids_of(body: bytes) -> list[Json] | None:
    """The ids of the requests a POST body carried (None when it cannot be read)."""
    try:
        decoded = json.loads(body)
    except (ValueError, RecursionError):
        return None
    items = decoded if isinstance(decoded, list) else [decoded]
    return [item["id"] for item in items if isinstance(item, dict) and "id" in item]


def describe(probe: Probe, outcome: Outcome, findings: list[Finding]) -> str:
    """A failure message: what was found, what was sent and what came back."""
    lines = [f"{finding.category}: {finding.detail}" for finding in findings]
    lines.append(f"sent {probe.method} {json.dumps(outcome.request_headers)[:600]}")
    lines.append(f"body {outcome.request_body[:600]!r}")
    lines.append(f"got {outcome.status} {json.dumps(outcome.headers)[:300]}")
    lines.append(f"body {outcome.body[:1000]!r}")
    return "\n".join(lines)


# -- tallies for the long run ---------------------------------------------------------------------------
@dataclass
class Seen:
    """One distinct kind of finding: how often it occurred, where, and the first probe that showed it."""

    count: int
    cases: set[tuple[str, str]]
    probe: Probe
    text: str


@dataclass
class Tally:
    """Counts per target and family, and every distinct finding with its first example."""

    examples: dict[tuple[str, str], int] = field(default_factory=dict)
    statuses: dict[int, int] = field(default_factory=dict)
    findings: dict[str, int] = field(default_factory=lambda: dict.fromkeys(CATEGORIES, 0))
    per_case: dict[tuple[str, str], dict[str, int]] = field(default_factory=dict)
    """Examples with a finding of each category, per target and family."""
    distinct: dict[str, Seen] = field(default_factory=dict)
    """By `signature`."""
    open_streams: int = 0

    def add(self, target: str, probe: Probe, outcome: Outcome, findings: list[Finding]) -> None:
        key = (target, probe.family)
        self.examples[key] = self.examples.get(key, 0) + 1
        status = outcome.status or 0
        self.statuses[status] = self.statuses.get(status, 0) + 1
        self.open_streams += outcome.status is None and outcome.open_stream
        case = self.per_case.setdefault(key, {})
        for category in categories_of(findings):
            case[category] = case.get(category, 0) + 1
        for finding in findings:
            self.findings[finding.category] += 1
            seen = self.distinct.get(signature(finding))
            if seen is None:
                text = describe(probe, outcome, [finding])
                self.distinct[signature(finding)] = Seen(1, {key}, probe, text)
            else:
                seen.count += 1
                seen.cases.add(key)


def signature(finding: Finding) -> str:
    """What tells one bug from another: the finding without the values of this example."""
    detail = finding.detail
    for cut in (" in {", ": {", ": b'", ": '", " in '", ": added", ": altered"):
        detail = detail.split(cut)[0]
    detail = re.sub(r"'[^']{12,}'", "'...'", detail)
    return f"{finding.category}: {re.sub(r'[0-9]+', 'N', detail)[:120]}"


def categories_of(findings: list[Finding]) -> set[str]:
    return {finding.category for finding in findings}
