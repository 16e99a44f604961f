"""A small stdio MCP server the gateway's tests kill and bring back (mcp 2.x MCPServer).

``python flaky_server.py PIDFILE GATE`` writes its process id to PIDFILE, so a test can kill
it, and exits at once with status 3 while the file GATE exists, so a test can keep it down
(the gateway's retries fail) and let it come back by removing GATE.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from mcp.server.mcpserver import MCPServer

if len(sys.argv) != 3:
    sys.exit("usage: flaky_server.py PIDFILE GATE")
PIDFILE, GATE = Path(sys.argv[1]), Path(sys.argv[2])

mcp = MCPServer("flaky-weather", instructions="A weather desk that a test keeps killing.")


@mcp.tool()
def get_weather_forecast(city: str) -> str:
    """Get the weather forecast for a city: temperature and rain for the next days."""
    return f"Forecast for {city}: 21 C, no rain (served by process {os.getpid()})"


@mcp.tool()
def get_air_quality(city: str) -> str:
    """Get the air quality index of a city."""
    return f"Air quality in {city}: 42"


if __name__ == "__main__":
    if GATE.exists():
        sys.exit(3)
    PIDFILE.write_text(str(os.getpid()), "utf-8")
    mcp.run("stdio")
