"""A small weather server: the example `./scripts/dev` serves.

Everything is computed locally (no network), so it runs anywhere:

    lambda-mcp dev examples/weather/server.py            # uvicorn, streaming
    lambda-mcp dev examples/weather/server.py --lambda   # through the real Lambda handler
"""

from __future__ import annotations

import hashlib
from typing import Annotated

from pydantic import BaseModel, Field

from lambda_mcp import Context, MCPApp

app = MCPApp(
    "weather",
    version="1.0.0",
    title="Weather",
    instructions="Forecasts and conditions for any city. Temperatures are in degrees Celsius.",
)

CONDITIONS = ("sunny", "cloudy", "rain", "snow", "windy", "fog")


class Forecast(BaseModel):
    city: str
    day: int
    condition: str
    high_c: float
    low_c: float


def _forecast(city: str, day: int) -> Forecast:
    seed = int(hashlib.sha256(f"{city.lower()}:{day}".encode()).hexdigest(), 16)
    high = round(5 + (seed % 250) / 10, 1)
    return Forecast(
        city=city, day=day, condition=CONDITIONS[seed % len(CONDITIONS)], high_c=high, low_c=round(high - 6, 1)
    )


@app.tool(title="Daily forecast", annotations={"readOnlyHint": True, "openWorldHint": False}, structured_output=True)
def forecast(
    city: Annotated[str, Field(description="City name, e.g. Lisbon")],
    days: Annotated[int, Field(ge=1, le=7, description="How many days ahead")] = 3,
) -> list[Forecast]:
    """Forecast for the next few days."""
    return [_forecast(city, day) for day in range(1, days + 1)]


@app.tool(title="Pack for a trip")
async def packing_list(city: str, days: int, ctx: Context) -> str:
    """Suggest what to pack, reporting progress day by day."""
    items: set[str] = {"toothbrush"}
    for day in range(1, days + 1):
        condition = _forecast(city, day).condition
        items |= {"rain": {"umbrella"}, "snow": {"boots", "gloves"}, "sunny": {"sunscreen"}}.get(condition, set())
        await ctx.report_progress(day, days, f"checked day {day}")
        await ctx.debug(f"day {day} in {city}: {condition}")
    return "Pack: " + ", ".join(sorted(items))


@app.resource("weather://cities", mime_type="application/json", title="Known cities")
def cities() -> str:
    """Cities with detailed climate notes."""
    return '["Lisbon", "Oslo", "Tokyo"]'


@app.resource("weather://climate/{city}", mime_type="text/plain", title="Climate notes")
def climate(city: str) -> str:
    """Climate notes for a city."""
    return f"{city}: mild winters, warm summers (example data)."


@app.prompt(title="Plan a day out")
def plan_day(city: str, activity: str = "walking") -> str:
    """Ask the model to plan a day around the forecast."""
    today = _forecast(city, 1)
    return f"Plan a day of {activity} in {city}. Forecast: {today.condition}, {today.low_c}-{today.high_c} C."
