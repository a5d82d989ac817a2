"""Long fuzzing run: the properties of `tests/fuzz` over many Hypothesis examples per target and era.

Sends generated requests through the Lambda handler (API Gateway v2 events) and the streaming server
(in-process ASGI), for the 2026-07-28 wire, the session-based wires and raw garbage, and (targets
`lambda-jwt`, `streaming-jwt`: auth `jwt` with a local issuer) hostile tokens and `Mcp-Param-*` values;
it counts what the properties find: 5xx, schema violations, internal-text leaks, state changed by
refused requests, unexpected exceptions inside the kit, storage keys DynamoDB would refuse,
protocol-rule breaks, hangs, and response headers over 8 KB or echoing made-up input.
Each distinct finding is then minimised: Hypothesis searches again for an input showing it and shrinks
that (`--no-shrink` skips this; the first input that showed it is printed either way). A report, not a
test: it exits 0 unless the harness itself fails.

    .venv/bin/python bench/fuzz.py [--examples 20000] [--targets lambda,streaming,lambda-jwt,streaming-jwt]
                                   [--families modern,legacy,raw,auth] [--seed N] [--no-shrink]
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

from tests.fuzz.probes import Probe, probes_for  # noqa: E402
from tests.fuzz.properties import Tally, describe, run_probe, signature  # noqa: E402
from tests.fuzz.targets import CATEGORIES, FAMILIES, TARGETS, Target  # noqa: E402

HEALTH = list(HealthCheck)


def explore(target: Target, family: str, examples: int, tally: Tally, chosen_seed: int | None) -> None:
    """Run `examples` generated probes of one family against one target, recording every finding."""

    @settings(
        max_examples=examples, deadline=None, database=None, phases=[Phase.generate], suppress_health_check=HEALTH
    )
    @given(data=st.data())
    def one(data: st.DataObject) -> None:
        probe = data.draw(probes_for(target.name, family))
        outcome, findings = run_probe(target, probe)
        tally.add(target.name, probe, outcome, findings)

    if chosen_seed is not None:
        one = seed(chosen_seed)(one)
    one()


def minimise(target: Target, family: str, wanted: str, budget: int) -> str | None:
    """The smallest probe Hypothesis finds again that shows the finding `wanted` (a `signature`)."""

    def shows(probe: Probe) -> bool:
        return wanted in {signature(finding) for finding in run_probe(target, probe)[1]}

    options = settings(max_examples=budget, deadline=None, database=None, suppress_health_check=HEALTH)
    try:
        probe = find(probes_for(target.name, family), shows, settings=options)
    except (NoSuchExample, Flaky):  # not found again, or not every time (deep nesting near the stack limit)
        return None
    outcome, findings = run_probe(target, probe)
    return f"{probe!r}\n{describe(probe, outcome, [f for f in findings if signature(f) == wanted])}"


def table(tally: Tally) -> str:
    lines = [
        "Examples with at least one finding, per category (goal: all 0)",
        f"{'target':<10} {'era':<7} {'examples':>8} " + " ".join(f"{c:>11}" for c in CATEGORIES),
    ]
    for (target, family), count in sorted(tally.examples.items()):
        row = tally.per_case.get((target, family), {})
        lines.append(f"{target:<10} {family:<7} {count:>8} " + " ".join(f"{row.get(c, 0):>11}" for c in CATEGORIES))
    return "\n".join(lines)


def summary(tally: Tally, elapsed: dict[str, float]) -> str:
    statuses = ", ".join(f"{s or 'none'}: {n}" for s, n in sorted(tally.statuses.items()))
    return "\n".join(
        [
            f"total examples: {sum(tally.examples.values())}; open streams cut at the timeout: {tally.open_streams}",
            f"HTTP statuses: {statuses}",
            f"5xx responses: {sum(n for s, n in tally.statuses.items() if s >= 500)} (goal 0)",
            *(f"{name} findings: {tally.findings[name]}" for name in CATEGORIES),
            "time: " + ", ".join(f"{name} {seconds:.0f} s" for name, seconds in elapsed.items()),
        ]
    )


def distinct(tally: Tally, minimal: dict[str, str | None]) -> str:
    blocks = []
    for number, (name, seen) in enumerate(sorted(tally.distinct.items()), 1):
        where = ", ".join(f"{t}/{f}" for t, f in sorted(seen.cases))
        shrunk = minimal.get(name)
        shown = f"minimal input:\n{shrunk}" if shrunk else f"first input:\n{seen.probe!r}\n{seen.text}"
        blocks.append(f"[{number}] {name}\n    {seen.count} times on {where}\n{shown}")
    return "\n\n".join(blocks) or "no findings"


def minimise_all(tally: Tally, targets: dict[str, Target], budget: int) -> dict[str, str | None]:
    minimal: dict[str, str | None] = {}
    for name, seen in sorted(tally.distinct.items()):
        target_name, family = min(seen.cases)
        minimal[name] = minimise(targets[target_name], family, name, budget)
    return minimal


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--examples", type=int, default=20_000, help="total examples over every target and era")
    parser.add_argument("--targets", default=",".join(TARGETS))
    parser.add_argument("--families", default="modern,legacy,raw,auth", help="each target gets those it takes")
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--no-shrink", action="store_true")
    parser.add_argument("--shrink-budget", type=int, default=3000, help="examples find() may try per finding")
    args = parser.parse_args()
    logging.getLogger("lambda_mcp").propagate = False  # the kit's error logs are counted, not printed
    names, families = args.targets.split(","), args.families.split(",")
    cases = [(name, family) for name in names for family in FAMILIES[name] if family in families]
    per_case = max(1, args.examples // max(1, len(cases)))
    tally, elapsed = Tally(), {}
    targets = {name: TARGETS[name]() for name in names}
    started = time.monotonic()
    for name, family in cases:
        began = time.monotonic()
        explore(targets[name], family, per_case, tally, args.seed)
        elapsed[f"{name}/{family}"] = time.monotonic() - began
        print(
            f"{name}/{family}: {tally.examples.get((name, family), 0)} examples in {elapsed[f'{name}/{family}']:.0f} s",
            flush=True,
        )
    elapsed["exploring"] = time.monotonic() - started
    minimal = {} if args.no_shrink else minimise_all(tally, targets, args.shrink_budget)
    elapsed["total"] = time.monotonic() - started
    print(f"\n{table(tally)}\n\n{summary(tally, elapsed)}\n\nDistinct findings\n\n{distinct(tally, minimal)}")
    for target in targets.values():
        target.close()


if __name__ == "__main__":
    main()
