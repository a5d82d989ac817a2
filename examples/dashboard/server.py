"""Dashboard: an MCP App. The `weather_dashboard` tool answers with data (and text for hosts without
apps); hosts of the `io.modelcontextprotocol/ui` extension render its results in the HTML at
`ui://dashboard/weather`.

    lambda-mcp dev examples/dashboard/server.py
"""

from __future__ import annotations

from lambda_mcp import MCPApp

app = MCPApp("dashboard", version="1.0.0")

PAGE = """<!doctype html>
<html><head><meta charset="utf-8"><title>Weather</title></head>
<body><h1>Weather</h1><pre id="out">waiting for the tool result...</pre>
<script>
window.addEventListener("message", (event) => {
  const message = event.data;
  if (message && message.method === "ui/notifications/tool-result") {
    document.getElementById("out").textContent = JSON.stringify(message.params.structuredContent, null, 2);
  }
});
</script></body></html>
"""


@app.ui_resource(
    "ui://dashboard/weather",
    title="Weather dashboard",
    csp={"connectDomains": ["https://api.open-meteo.com"]},
    prefers_border=True,
)
def weather_page() -> str:
    return PAGE


@app.tool(ui="ui://dashboard/weather", structured_output=True)
def weather_dashboard(city: str) -> dict[str, object]:
    """Today's weather for a city, shown in the dashboard where the host supports MCP Apps."""
    return {"city": city, "temperature_c": 21, "sky": "clear"}
