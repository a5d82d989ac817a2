#!/bin/sh
# The streaming function's handler (template.yaml, Transport=streaming): the Lambda Web Adapter's wrapper
# (AWS_LAMBDA_EXEC_WRAPPER=/opt/bootstrap) runs it from $LAMBDA_TASK_ROOT as the runtime process. It
# starts `lambda-mcp serve` on $LAMBDA_MCP_APP, listening on 127.0.0.1:$PORT (LWA's port, default 8080);
# LWA waits for /healthz, then forwards each invocation to it and streams the answer back.
# The wrapper skips the runtime's own setup, so the layers (/opt/python: the kit and its dependencies)
# and the function's code go on PYTHONPATH here. Keep this file executable, with LF line endings.
set -eu
cd "${LAMBDA_TASK_ROOT:-$(dirname "$0")}"
PYTHONPATH="/opt/python:$(pwd)${PYTHONPATH:+:$PYTHONPATH}"
export PYTHONPATH
exec python3 -m lambda_mcp serve "${LAMBDA_MCP_APP:?set LAMBDA_MCP_APP to the app, e.g. app.py:app}" \
    --port "${AWS_LWA_PORT:-${PORT:-8080}}"
