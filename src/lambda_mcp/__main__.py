"""`python -m lambda_mcp`: the `lambda-mcp` console script (for `run.sh`, where no script is on the PATH)."""

from .cli import main

raise SystemExit(main())
