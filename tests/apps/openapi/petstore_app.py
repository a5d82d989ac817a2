"""The petstore document's operations as tools, for `lambda-mcp dev` tests: the API's base URL comes from
`PETSTORE_API_URL`; with `PETSTORE_SIGNED_URL` (a SigV4-checking door in front of the same API), the
listing, the creation and the lookup of pets are served again through it with `auth="sigv4"`
(`signed_listPets`, `signed_createPet`, `signed_showPetById`), and the lookup without auth
(`unsigned_showPetById`); with `PETSTORE_UNREACHABLE_URL` (where nothing listens), the health check is
served again as `unreachable_health` calling there."""

from __future__ import annotations

import os
from pathlib import Path

from lambda_mcp import MCPApp

SPEC = Path(__file__).with_name("petstore-3.1.json")

app = MCPApp("petstore", version="1.0.0")
app.openapi(
    SPEC, base_url=os.environ["PETSTORE_API_URL"], exclude_tags=["admin"], task_support={"listPets": "optional"}
)
if signed := os.environ.get("PETSTORE_SIGNED_URL"):
    names = {name: f"signed_{name}" for name in ("listPets", "createPet", "showPetById")}
    paths = ["/pets", "/pets/{petId}"]
    app.openapi(SPEC, base_url=signed, auth="sigv4", names=names, paths=paths, methods=["get", "post"])
    unsigned = {"showPetById": "unsigned_showPetById"}
    app.openapi(SPEC, base_url=signed, names=unsigned, paths=["/pets/{petId}"], methods=["get"])
if gone := os.environ.get("PETSTORE_UNREACHABLE_URL"):
    app.openapi(SPEC, base_url=gone, names={"get_health": "unreachable_health"}, paths=["/health"])
