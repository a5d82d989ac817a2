"""`lambda-mcp new NAME --target agentcore`: the files that also deploy a new project to Amazon Bedrock
AgentCore Runtime: an arm64 `Dockerfile` (the Runtime runs linux/arm64 containers only) whose process is
`lambda-mcp serve --agentcore app.py` on port 8000 (the Runtime's MCP contract, `agentcore_runtime.py`),
its `.dockerignore`, and `AGENTCORE.md`, the deploy notes. The kit is installed as the project's
KitLayer names it (`builds/kit/`: the wheel there, or the release by version).
"""

from __future__ import annotations

from pathlib import Path

from .kit import Kit

DOCKERFILE = """\
# {name} on Amazon Bedrock AgentCore Runtime (AGENTCORE.md): linux/arm64, the Runtime's MCP contract
# (0.0.0.0:8000/mcp, stateless, GET /ping), served by `lambda-mcp serve --agentcore`.
FROM --platform=linux/arm64 python:3.13-slim

ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1
WORKDIR /app

# The kit as builds/kit/ names it (its wheel, or the release), with boto3 for LAMBDA_MCP_TABLE_NAME.
COPY builds/kit/ /tmp/kit/
COPY app/requirements.txt /tmp/requirements.txt
RUN pip install --no-cache-dir "{kit}" -r /tmp/requirements.txt && rm -rf /tmp/kit /tmp/requirements.txt

COPY app/ /app/

# AgentCore authenticates every InvokeAgentRuntime call (IAM SigV4 or its JWT authorizer) before the
# request reaches this container: the kit itself checks nothing. Choose jwt here to validate tokens too.
ENV LAMBDA_MCP_AUTH=none

USER 1000
EXPOSE 8000
CMD ["lambda-mcp", "serve", "--agentcore", "app.py"]
"""

DOCKERIGNORE = """\
.aws-sam/
.git/
.venv/
**/__pycache__/
tests/
events/
"""

NOTES = """\
# {name} on Amazon Bedrock AgentCore Runtime

The same app as the SAM stack, as an MCP server container under the Runtime's MCP protocol contract:
`lambda-mcp serve --agentcore app.py` listens on `0.0.0.0:8000`, serves `/mcp` statelessly (the
platform's `Mcp-Session-Id` and `X-Amzn-Bedrock-AgentCore-Runtime-Session-Id` are accepted), and answers
`GET /ping` with `{{"status": "Healthy"}}`.

## Try it locally

    docker buildx build --platform linux/arm64 -t {name} --load .
    docker run --rm -p 8000:8000 {name}
    lambda-mcp list http://127.0.0.1:8000/mcp

(An x86 machine runs the arm64 image through QEMU: `docker run --privileged --rm tonistiigi/binfmt --install arm64`.)

## Deploy

1. Push the image to Amazon ECR (linux/arm64; at most 2 GB).
2. Create the runtime with the MCP protocol, or the platform probes port 8080 instead:
   `aws bedrock-agentcore-control create-agent-runtime --agent-runtime-name {name_underscored}
   --agent-runtime-artifact containerConfiguration={{containerUri=ACCOUNT.dkr.ecr.REGION.amazonaws.com/{name}:latest}}
   --role-arn ROLE_ARN --network-configuration networkMode=PUBLIC
   --protocol-configuration serverProtocol=MCP`
   (or the AgentCore CLI, `npm install -g @aws/agentcore`; or CloudFormation `AWS::BedrockAgentCore::Runtime`).
3. Call it at `https://bedrock-agentcore.REGION.amazonaws.com/runtimes/URL-ENCODED-ARN/invocations?qualifier=DEFAULT`
   with SigV4 (service `bedrock-agentcore`) or the runtime's JWT authorizer.

## Settings and state

- The kit's `LAMBDA_MCP_*` variables, as the runtime's environment variables.
- The platform may send a session's requests to another microVM: with tasks, or 2025-11-25 sessions that
  use elicitation, sampling or subscriptions, set `LAMBDA_MCP_TABLE_NAME` (a table like the stack's
  StateTable; grant the runtime's role access to it). Without it, state lives in one microVM's memory.
- 2025-11-25 requests naming a session the kit never issued are served statelessly: nothing is asked of
  the client (no elicitation or sampling). 2026-07-28 is stateless by the spec and keeps all of it.
- `LAMBDA_MCP_ALLOWED_HOSTS` locks the Host check to the names listed (default: any Host; the Origin
  check stays).
- The Runtime gives a container 120 s to start, a request 15 minutes, and a session 8 hours at most.
"""


def kit_install(kit: Kit) -> str:
    """What the Dockerfile's pip installs: the wheel `builds/kit/` carries, or the release, with `aws`."""
    if kit.wheel_name:
        return f"/tmp/kit/{kit.wheel_name}[aws]"
    name, _, version = kit.requirement.partition("==")
    return f"{name}[aws]=={version}" if version else f"{kit.requirement}[aws]"


def add_agentcore(project: Path, name: str, kit: Kit) -> list[Path]:
    """Write the AgentCore Runtime files into `project` (never over an existing file); the paths written."""
    files = {
        "Dockerfile": DOCKERFILE.format(name=name, kit=kit_install(kit)),
        ".dockerignore": DOCKERIGNORE,
        "AGENTCORE.md": NOTES.format(name=name, name_underscored=name.replace("-", "_")),
    }
    written = []
    for relative, text in files.items():
        path = project / relative
        if not path.exists():
            path.write_text(text, encoding="utf-8")
            written.append(path)
    return written
