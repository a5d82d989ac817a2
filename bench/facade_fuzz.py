"""Long fuzzing run of the authorization facade: the properties of `tests/fuzz/facade_properties.py` over
many Hypothesis examples per endpoint family.

Sends the probes of `tests/fuzz/facade_probes.py` (hostile DCR bodies, hostile metadata documents served
on loopback, hostile authorize queries, consent and token bodies, callbacks and revocations around real
values from real sign-ins) and of `tests/fuzz/agent_probes.py` (identity for agents: client_credentials
and the jwt-bearer grant with hostile client assertions, Basic secrets and ID-JAGs for operator clients;
DPoP proofs at the token endpoint and `/mcp`; the metadata document) to a facade (`LAMBDA_MCP_AUTH=proxy`,
in-memory state, a stand-in upstream, operator clients, a trusted enterprise IdP) behind the Lambda handler
(Mangum fed API Gateway HTTP API events) and, with `--targets`, the streaming server and the Lambda handler
asking for DPoP nonces (`lambda-nonce`). It counts what the properties find (5xx, internal errors, leaks,
header injection or echo, HTML injection, non-RFC 6749 errors, open redirects, storage keys, hangs,
credentials echoed) and prints, per family, the examples
run, the HTTP statuses seen and the time taken. Each distinct finding is then minimised: Hypothesis
searches again for an input showing it and shrinks that (`--no-shrink` skips this; the first input that
showed it is printed either way). A report, not a test: it exits 0 unless the harness itself fails.

    .venv/bin/python bench/facade_fuzz.py [--examples 20000] [--targets lambda,streaming,lambda-nonce]
                                          [--families register,cimd,...,machine,dpop,metadata]
                                          [--seed N] [--no-shrink]
"""

from __future__ import annotations

import argparse
import logging
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from hypothesis import HealthCheck, Phase, find, given, seed, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from hypothesis.errors import Flaky, NoSuchExample  # noqa: E402

from tests.fuzz.agent_probes import FAMILIES as AGENT_FAMILIES  # noqa: E402
from tests.fuzz.facade_probes import FAMILIES, FacadeProbe, facade_probes  # noqa: E402
from tests.fuzz.facade_properties import CATEGORIES, FacadeTally, describe, run_facade_probe  # noqa: E402
from tests.fuzz.facade_target import TARGETS, FacadeTarget  # noqa: E402
from tests.fuzz.properties import signature  # noqa: E402

HEALTH = list(HealthCheck)


def explore(target: FacadeTarget, family: str, examples: int, tally: FacadeTally, chosen_seed: int | None) -> None:
    """Run `examples` generated probes of one family against one target, recording every finding."""

    @settings(
        max_examples=examples, deadline=None, database=None, phases=[Phase.generate], suppress_health_check=HEALTH
    )
    @given(data=st.data())
    def one(data: st.DataObject) -> None:
        probe = data.draw(facade_probes(family))
        outcome, findings = run_facade_probe(target, probe)
        tally.add(probe, outcome, findings)

    if chosen_seed is not None:
        one = seed(chosen_seed)(one)
    one()


def minimise(target: FacadeTarget, family: str, wanted: str, budget: int) -> str | None:
    """The smallest probe Hypothesis finds again that shows the finding `wanted` (a `signature`)."""

    def shows(probe: FacadeProbe) -> bool:
        return wanted in {signature(finding) for finding in run_facade_probe(target, probe)[1]}

    options = settings(max_examples=budget, deadline=None, database=None, suppress_health_check=HEALTH)
    try:
        probe = find(facade_probes(family), shows, settings=options)
    except (NoSuchExample, Flaky):
        return None
    outcome, findings = run_facade_probe(target, probe)
    return f"{probe!r}\n{describe(outcome, [f for f in findings if signature(f) == wanted])}"


def statuses(tally: FacadeTally, case: str) -> str:
    return ", ".join(f"{status or 'none'}: {count}" for status, count in sorted(tally.statuses.get(case, {}).items()))


def table(tally: FacadeTally, elapsed: dict[str, float]) -> str:
    lines = [
        "Examples per endpoint family, with a finding per category (goal: all 0)",
        f"{'target/family':<20} {'examples':>8} {'seconds':>7} " + " ".join(f"{c:>11}" for c in CATEGORIES),
    ]
    for case, count in sorted(tally.examples.items()):
        row = tally.per_family.get(case, {})
        cells = " ".join(f"{row.get(c, 0):>11}" for c in CATEGORIES)
        lines.append(f"{case:<20} {count:>8} {elapsed.get(case, 0.0):>7.0f} {cells}")
    lines += ["", "HTTP statuses per family"]
    lines += [f"{case:<20} {statuses(tally, case)}" for case in sorted(tally.examples)]
    return "\n".join(lines)


def summary(tally: FacadeTally, elapsed: dict[str, float]) -> str:
    seen: dict[int, int] = {}
    for counts in tally.statuses.values():
        for status, count in counts.items():
            seen[status] = seen.get(status, 0) + count
    return "\n".join(
        [
            f"total examples: {sum(tally.examples.values())}",
            "HTTP statuses: " + ", ".join(f"{s or 'none'}: {n}" for s, n in sorted(seen.items())),
            f"5xx responses: {sum(n for s, n in seen.items() if s >= 500) - tally.deliberate} (goal 0), besides"
            f" {tally.deliberate} deliberate 503s (temporarily_unavailable: a dependency the target keeps down)",
            *(f"{name} findings: {tally.findings.get(name, 0)}" for name in CATEGORIES),
            f"time: exploring {elapsed['exploring']:.0f} s, total {elapsed['total']:.0f} s",
        ]
    )


def distinct(tally: FacadeTally, minimal: dict[str, str | None]) -> str:
    blocks = []
    for number, (name, seen) in enumerate(sorted(tally.distinct.items()), 1):
        shrunk = minimal.get(name)
        shown = f"minimal input:\n{shrunk}" if shrunk else f"first input:\n{seen.probe!r}\n{seen.text}"
        blocks.append(f"[{number}] {name}\n    {seen.count} times on {', '.join(sorted(seen.families))}\n{shown}")
    return "\n\n".join(blocks) or "no findings"


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--examples", type=int, default=20_000, help="total examples over every target and family")
    parser.add_argument(
        "--targets", default="lambda", help="lambda (the Lambda handler), streaming, lambda-nonce (DPoP nonces)"
    )
    parser.add_argument("--families", default=",".join((*FAMILIES, *AGENT_FAMILIES)))
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--no-shrink", action="store_true")
    parser.add_argument("--shrink-budget", type=int, default=2000, help="examples find() may try per finding")
    args = parser.parse_args()
    logging.getLogger("lambda_mcp").propagate = False  # the kit's error logs are counted, not printed
    logging.getLogger("mangum").addHandler(logging.NullHandler())  # Mangum's traceback of a 500: counted
    logging.getLogger("mangum").propagate = False
    names, families = args.targets.split(","), args.families.split(",")
    cases = [(name, family) for name in names for family in families]
    per_case = max(1, args.examples // max(1, len(cases)))
    tally, elapsed = FacadeTally(), {}
    targets = {name: TARGETS[name]() for name in names}
    started = time.monotonic()
    try:
        for name, family in cases:
            began, case = time.monotonic(), f"{name}/{family}"
            explore(targets[name], family, per_case, tally, args.seed)
            elapsed[case] = time.monotonic() - began
            print(f"{case}: {tally.examples.get(case, 0)} examples in {elapsed[case]:.0f} s", flush=True)
        elapsed["exploring"] = time.monotonic() - started
        minimal: dict[str, str | None] = {}
        if not args.no_shrink:
            for wanted, seen in sorted(tally.distinct.items()):
                target_name, family = min(seen.families).split("/", 1)
                minimal[wanted] = minimise(targets[target_name], family, wanted, args.shrink_budget)
        elapsed["total"] = time.monotonic() - started
    finally:
        for target in targets.values():
            target.close()
    print(f"\n{table(tally, elapsed)}\n\n{summary(tally, elapsed)}\n\nDistinct findings\n\n{distinct(tally, minimal)}")


if __name__ == "__main__":
    main()
