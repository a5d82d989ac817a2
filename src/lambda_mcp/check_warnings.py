"""`lambda-mcp check`'s warnings: what a deploy's values set that the stack will not use, or that another
setting undercuts (nothing CloudFormation refuses; the check still passes)."""

from __future__ import annotations

from typing import Any

FACADE_MODES = ("cognito", "proxy")
"""The AuthModes whose function runs the authorization facade."""
GATEWAY_SESSION_SECONDS = 3600
"""How long an AgentCore gateway keeps and reuses a target's `Mcp-Session-Id` by default."""
FACADE_ONLY = (
    "AuthClientsParameter",
    "AuthClientsSecretArn",
    "AuthTrustedIssuers",
    "AuthDpop",
    "AuthDpopNonce",
    "ConnectionSecretArns",
    "ConnectionSecretParameterArns",
)
"""Parameters only the facade reads (the other modes ignore them)."""
CLIENT_SOURCES = ("AuthClientsParameter", "AuthClientsSecretArn")


def warnings(template: dict[str, Any], values: dict[str, str]) -> list[str]:
    """What these values set that the stack will not use, one line each (nothing CloudFormation refuses)."""
    parameters = {str(k): v if isinstance(v, dict) else {} for k, v in (template.get("Parameters") or {}).items()}
    mode = values.get("AuthMode", "")

    def changed(name: str) -> bool:
        return name in values and values[name] != str(parameters.get(name, {}).get("Default", ""))

    found = []
    if mode not in FACADE_MODES:
        found += [
            f"{name}={values[name]} is ignored: AuthMode={mode or '(none)'} runs no authorization facade (it is"
            f" read by AuthMode={' or '.join(FACADE_MODES)} only)"
            for name in FACADE_ONLY
            if changed(name)
        ]
    elif changed("AuthTrustedIssuers") and not any(changed(name) for name in CLIENT_SOURCES):
        found.append(
            "AuthTrustedIssuers is set without AuthClientsParameter or AuthClientsSecretArn: an ID-JAG is accepted"
            " only from an operator client with the jwt-bearer grant (lambda-mcp clients add ... --grant jwt-bearer)"
        )
    ttl = values.get("SessionTtlSeconds", str(parameters.get("SessionTtlSeconds", {}).get("Default", "")))
    if changed("AgentCoreGatewayRoleArn") and ttl.isdigit() and int(ttl) < GATEWAY_SESSION_SECONDS:
        found.append(
            f"SessionTtlSeconds={ttl} is shorter than an AgentCore gateway keeps a target's session (3,600 s by"
            " default, up to 28,800): set it to at least the gateway's session timeout (docs/agentcore.md)"
        )
    return found
