"""How the kit-made tools authenticate their calls to other services: `auth=` of `app.openapi` and
`app.mount`.

```python
from lambda_mcp.outbound import Header, SigV4, bearer

app.openapi("openapi.json", auth=bearer("secretsmanager:petstore-token"))
app.openapi("billing.yaml", auth=Header("X-Api-Key", "ssm:/billing/api-key"))
app.openapi("https://abc123.execute-api.eu-west-1.amazonaws.com/prod/openapi.json", auth="sigv4")
app.mount("https://tools.example.com/mcp", prefix="vendor", auth="caller")
```

`None` adds nothing; `Header`/`bearer` a header whose value is given or read from a secret
(`secretsmanager:...`, `ssm:...`); `"sigv4"` (or `SigV4(service=..., region=...)`) signs with the
function's role; `"caller"` sends the caller's own token at the identity provider they signed in with
(the authorization facade); `"connection:<name>"` the caller's token at that connection.
"""

from .server.outbound.auth import Header, SigV4, bearer

__all__ = ["Header", "SigV4", "bearer"]
