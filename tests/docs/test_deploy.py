"""docs/deploy.md opens with the decision table (issue 34): every AuthMode of the template has a row, and
every row's AuthMode, ApiType and Transport are values the template takes together (`lambda-mcp check`
passes them, with the other values that mode needs)."""

from __future__ import annotations

import re

from lambda_mcp.check import Deployment, load_template, problems
from tests.infra.templates import AUTH_MODES, TEMPLATE
from tests.support.processes import ROOT

DEPLOY = ROOT / "docs/deploy.md"


def _rows() -> list[list[str]]:
    text = DEPLOY.read_text()
    first = re.search(r"^## (.*)$", text, re.MULTILINE)
    assert first and first.group(1) == "Which AuthMode, ApiType and Transport", "the table comes first"
    table = text[first.end() : text.index("\n\n", text.index("| your team's situation |"))]
    rows = [line.split(" | ") for line in table.splitlines() if line.startswith("| ") and "---" not in line]
    assert rows[0][1:4] == ["`AuthMode`", "`ApiType`", "`Transport`"], rows[0]
    return rows[1:]


def test_every_auth_mode_has_a_row_and_every_row_deploys() -> None:
    template = load_template(TEMPLATE)
    parameters = template["Parameters"]
    seen = set()
    for row in _rows():
        modes, apis, transports = (re.findall(r"`([^`]+)`", cell) for cell in row[1:4])
        modes = [m for m in modes if m in parameters["AuthMode"]["AllowedValues"]] or ["jwt", "iam", "none"]
        seen.update(modes)
        apis = [a for a in apis if a in parameters["ApiType"]["AllowedValues"]]
        assert apis and transports and set(transports) <= set(parameters["Transport"]["AllowedValues"]), row
        for mode in modes:
            for api in apis:
                for transport in transports:
                    values = {"AuthMode": mode, "ApiType": api, "Transport": transport, **AUTH_MODES[(api, mode)]}
                    if "WafRateLimit" in row[3]:
                        values["WafRateLimit"] = "100"
                    assert problems(template, Deployment(TEMPLATE, values, "the table")) == [], (row[0], values)
    assert seen == set(parameters["AuthMode"]["AllowedValues"])
