"""Cold starts counted in CPU instructions: bench/run.py's instruction ratios against the SDK.

Wall-time cold ratios swing with the machine's load (issue 40: 0.174-0.242x in wall time where callgrind
counts 0.242x). Instruction counts do not: each case is one fresh process under valgrind's callgrind
(tests/support/instructions.py, shared with the CI budgets of tests/integration/test_instruction_budgets.py),
its bytecode compiled first by a native run of the same program, with a fixed environment and
`PYTHONHASHSEED=0`. Two counts of one program differ by a few thousand instructions in a billion.

bench/run.py gives the programs (its cold child: import the entrypoint, one request through the Lambda
handler, the response checked) and prints `report(...)` beside its wall-time rows:

    lambda-mcp (deployed shape) vs the SDK behind Mangum, import + first request, both logging as deployed:
    the 2026 tools/call (target <= 0.20x) and the legacy initialize (target <= 0.45x), and `python -c pass`.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from tests.support.instructions import available, count_all  # noqa: E402

__all__ = ["PASS", "ROWS", "available", "cold_counts", "report"]

PASS = "python -c pass"
"""The interpreter's own start and exit: the case every count includes."""
ROWS = {  # label: (case, SDK case, the bench's TARGETS key); the SDK's initialize counts within 0.1 % of its call
    "cold: import + 1st 2026 tools/call": ("lambda-mcp/modern", "sdk/modern", "cold"),
    "cold: import + 1st legacy initialize (SDK: 1st call)": ("lambda-mcp/initialize", "sdk/modern", "cold_initialize"),
}
Program = Callable[[str, str], tuple[str, Mapping[str, str]]]
"""(stack, wire) -> the cold child's code and environment."""
Check = Callable[[str, str, str], object]
"""(stack, wire, stdout): raises if the child's response is wrong."""


def cold_counts(program: Program, check: Check, workers: int = 2) -> dict[str, int] | None:
    """The instructions of every case of `ROWS` and of `python -c pass` (bench/run.py's cold child as
    `program` builds it, its response checked), `workers` at a time, the longest first; None without valgrind."""
    if not available():
        return None
    cases = sorted({case for row in ROWS.values() for case in row[:2]}, reverse=True)  # the SDK first
    programs = {case: program(*case.split("/")) for case in cases}
    programs[PASS] = ("pass", program(*cases[0].split("/"))[1])
    counted = count_all(programs, workers)
    for case, count in counted.items():
        if case != PASS:
            check(*case.split("/"), count.stdout)
    return {case: count.instructions for case, count in counted.items()}


def report(counts: Mapping[str, int], targets: Mapping[str, float]) -> None:
    """Print one line per row of `ROWS`: both counts, the ratio, the target (`targets[key]`), and `pass`."""
    header = ("metric", "lambda-mcp", "sdk", "ratio", "target", "met?")
    table = [header]
    for label, (case, sdk_case, key) in ROWS.items():
        ratio, target = counts[case] / counts[sdk_case], targets[key]
        met = "yes" if ratio <= target else "NO"
        table.append(
            (label, _millions(counts[case]), _millions(counts[sdk_case]), f"{ratio:.3f}x", f"<= {target:.2f}x", met)
        )
    widths = [max(len(r[i]) for r in table) for i in range(len(header))]
    print(
        "== Cold in CPU instructions (callgrind; one fresh process per case, deterministic; ratio = lambda-mcp / SDK)"
    )
    for i, r in enumerate(table):
        print("   " + "  ".join(c.ljust(widths[j]) if j == 0 else c.rjust(widths[j]) for j, c in enumerate(r)))
        if i == 0:
            print("   " + "  ".join("-" * w for w in widths))
    print(f"   {PASS}: {_millions(counts[PASS])} (included in every count above)")


def _millions(instructions: int) -> str:
    return f"{instructions / 1e6:,.0f}M"
