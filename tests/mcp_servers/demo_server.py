"""A small fake "ops" MCP server over stdio for the adapter's tests (mcp 2.x MCPServer).

It has 35 tools with typed parameters and canned answers, pages its ``tools/list`` answer
(12 tools a page, so a client must follow the cursor), adds three tools at run time through
``enable_extra_tools``, removes one through ``disable_tool`` and rewrites one's description
through ``reword_tool``, sending ``notifications/tools/list_changed`` each time. Run it as
``python demo_server.py`` (``--endless-cursor`` makes its paging broken).
"""

from __future__ import annotations

import json
import sys
from typing import Any, Literal

import anyio
from mcp.server.lowlevel import NotificationOptions
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.stdio import stdio_server
from mcp.types import ListToolsResult, PaginatedRequestParams, ToolAnnotations

PAGE_SIZE = 12
#: ``--endless-cursor``: tools/list answers the same cursor forever (a broken server).
ENDLESS_CURSOR = "--endless-cursor" in sys.argv

Priority = Literal["low", "medium", "high", "urgent"]
Severity = Literal["sev1", "sev2", "sev3", "sev4"]
Environment = Literal["staging", "production"]

TICKETS: list[dict[str, Any]] = [
    {"id": "OPS-1001", "title": "Disk almost full on db-2", "status": "open", "assignee": "anna"},
    {"id": "OPS-1002", "title": "Renew TLS certificate", "status": "open", "assignee": "boris"},
    {"id": "OPS-1003", "title": "Flaky health check", "status": "closed", "assignee": "anna"},
]


class PagedServer(MCPServer):
    """MCPServer whose tools/list answer comes in pages of PAGE_SIZE, with a cursor."""

    async def _handle_list_tools(  # type: ignore[override]
        self, ctx: Any, params: PaginatedRequestParams | None
    ) -> ListToolsResult:
        tools = await self.list_tools()
        start = int(params.cursor) if params is not None and params.cursor else 0
        end = start + PAGE_SIZE
        more = end < len(tools)
        if ENDLESS_CURSOR:  # a broken paginator: page two forever
            return ListToolsResult(tools=tools[:PAGE_SIZE], next_cursor="12")
        return ListToolsResult(tools=tools[start:end], next_cursor=str(end) if more else None)


mcp = PagedServer("ops-demo", instructions="A fake operations desk: tickets, incidents, deploys.")


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


# -- tickets ------------------------------------------------------------------------------


@mcp.tool(annotations=ToolAnnotations(readOnlyHint=True))
def list_tickets(status: str = "open", assignee: str | None = None, limit: int = 20) -> str:
    """List support tickets of the operations desk, filtered by status and assignee."""
    found = [t for t in TICKETS if t["status"] == status]
    if assignee:
        found = [t for t in found if t["assignee"] == assignee]
    return _json(found[:limit])


@mcp.tool(annotations=ToolAnnotations(readOnlyHint=True))
def get_ticket(ticket_id: str) -> str:
    """Show one support ticket with its title, status and assignee."""
    for t in TICKETS:
        if t["id"] == ticket_id:
            return _json(t)
    return _json({"error": f"no ticket {ticket_id}"})


@mcp.tool(annotations=ToolAnnotations(readOnlyHint=False))
def create_ticket(title: str, description: str, priority: Priority = "medium") -> str:
    """Create a new support ticket on the operations desk."""
    return f"Created ticket OPS-1043: {title} (priority {priority}, {len(description)} chars)"


@mcp.tool()
def update_ticket(
    ticket_id: str, status: str | None = None, priority: Priority | None = None
) -> str:
    """Change a ticket's status or priority."""
    return f"Updated {ticket_id}: status={status} priority={priority}"


@mcp.tool()
def assign_ticket(ticket_id: str, assignee: str) -> str:
    """Assign a support ticket to an engineer."""
    return f"Assigned {ticket_id} to {assignee}"


@mcp.tool()
def close_ticket(ticket_id: str, resolution: str) -> str:
    """Close a support ticket with a resolution note."""
    return f"Closed {ticket_id}: {resolution}"


@mcp.tool()
def comment_on_ticket(ticket_id: str, text: str) -> str:
    """Add a comment to a support ticket's discussion."""
    return f"Commented on {ticket_id}"


@mcp.tool()
def search_tickets(query: str, limit: int = 10) -> str:
    """Search support tickets by words in their title."""
    words = query.lower().split()
    return _json([t for t in TICKETS if any(w in t["title"].lower() for w in words)][:limit])


# -- incidents ----------------------------------------------------------------------------


@mcp.tool()
def list_incidents(status: Literal["open", "resolved", "all"] = "open") -> str:
    """List production incidents by status."""
    return _json([{"id": "INC-77", "title": "API latency spike", "severity": "sev2"}])


@mcp.tool()
def open_incident(title: str, severity: Severity = "sev3") -> str:
    """Declare a new production incident and start its timeline."""
    return f"Opened INC-78: {title} ({severity})"


@mcp.tool()
def acknowledge_incident(incident_id: str) -> str:
    """Acknowledge an incident so the pager stops escalating it."""
    return f"Acknowledged {incident_id}"


@mcp.tool()
def resolve_incident(incident_id: str, summary: str) -> str:
    """Mark an incident resolved with a short summary of the fix."""
    return f"Resolved {incident_id}"


@mcp.tool()
def write_postmortem(incident_id: str, summary: str, action_items: list[str] | None = None) -> str:
    """Draft the postmortem document of a resolved incident."""
    return f"Postmortem for {incident_id} with {len(action_items or [])} action items"


# -- on-call ------------------------------------------------------------------------------


@mcp.tool()
def get_oncall_schedule(team: str, days: int = 7) -> str:
    """Show who is on call for a team over the next days."""
    return _json({"team": team, "days": days, "primary": "anna", "secondary": "boris"})


@mcp.tool()
def page_oncall(team: str, message: str, urgent: bool = False) -> str:
    """Page the on-call engineer of a team with a message."""
    return f"Paged {team} on-call (urgent={urgent})"


@mcp.tool()
def swap_oncall_shift(team: str, from_user: str, to_user: str, date: str) -> str:
    """Swap an on-call shift between two engineers on a given date."""
    return f"Swapped {team} shift on {date}: {from_user} -> {to_user}"


# -- alerts -------------------------------------------------------------------------------


@mcp.tool()
def list_alerts(severity: Literal["critical", "warning", "info"] | None = None) -> str:
    """List firing monitoring alerts, optionally by severity."""
    return _json([{"id": "AL-5", "name": "HighErrorRate", "severity": "critical"}])


@mcp.tool()
def silence_alert(alert_id: str, minutes: int = 60, reason: str = "") -> str:
    """Silence a monitoring alert for a number of minutes."""
    return f"Silenced {alert_id} for {minutes} min"


@mcp.tool()
def create_alert_rule(name: str, metric: str, threshold: float, for_minutes: int = 5) -> str:
    """Create a monitoring alert rule on a metric threshold."""
    return f"Created alert rule {name}: {metric} > {threshold} for {for_minutes}m"


# -- services and deploys -----------------------------------------------------------------


@mcp.tool()
def list_services() -> str:
    """List the services the operations team runs."""
    return _json(["api", "billing", "search", "worker"])


@mcp.tool()
def get_service_health(service: str) -> str:
    """Show a service's health: uptime, error rate and latency."""
    return _json({"service": service, "uptime": "99.95%", "error_rate": 0.002, "p99_ms": 310})


@mcp.tool()
def restart_service(service: str, environment: Environment = "staging") -> str:
    """Restart a service's instances in an environment."""
    return f"Restarted {service} in {environment}"


@mcp.tool()
def scale_service(service: str, replicas: int, environment: Environment = "staging") -> str:
    """Change the number of running replicas of a service."""
    return f"Scaled {service} to {replicas} in {environment}"


@mcp.tool()
def deploy_release(service: str, version: str, environment: Environment = "staging") -> str:
    """Deploy a release version of a service to an environment."""
    return f"Deploying {service} {version} to {environment}"


@mcp.tool()
def rollback_deploy(service: str, environment: Environment = "production") -> str:
    """Roll a service back to its previous release."""
    return f"Rolled back {service} in {environment}"


@mcp.tool()
def list_deployments(service: str, limit: int = 10) -> str:
    """List the recent deployments of a service."""
    return _json([{"service": service, "version": "1.4.2", "when": "2024-05-01T10:00:00Z"}])


# -- observability ------------------------------------------------------------------------


@mcp.tool()
def query_metrics(metric: str, minutes: int = 30, service: str | None = None) -> str:
    """Query a time series metric over the last minutes."""
    return _json({"metric": metric, "points": [1.0, 1.2, 0.9]})


@mcp.tool()
def search_logs(query: str, service: str | None = None, minutes: int = 15) -> str:
    """Search service logs for a text over the last minutes."""
    return _json([{"ts": "10:00:01", "service": service or "api", "line": f"... {query} ..."}])


@mcp.tool()
def get_runbook(topic: str) -> str:
    """Fetch the runbook page for an operational topic."""
    return f"Runbook: {topic}: 1. check dashboards 2. page on-call"


# -- maintenance and secrets --------------------------------------------------------------


@mcp.tool()
def list_maintenance_windows(days: int = 14) -> str:
    """List scheduled maintenance windows."""
    return _json([{"service": "db", "start": "Sat 02:00", "minutes": 60}])


@mcp.tool()
def schedule_maintenance(service: str, start: str, duration_minutes: int = 60) -> str:
    """Schedule a maintenance window for a service."""
    return f"Scheduled {service} maintenance at {start} for {duration_minutes} min"


@mcp.tool()
def rotate_secret(name: str, environment: Environment = "staging") -> str:
    """Rotate a stored secret (API key, password) and roll it out."""
    return f"Rotated secret {name} in {environment}"


# -- run-time changes to the tool list ----------------------------------------------------


def get_sla_report(month: str) -> str:
    """Report SLA compliance of every service for a month."""
    return _json({"month": month, "api": "99.97%"})


def export_tickets_csv(status: str = "open") -> str:
    """Export support tickets as CSV text."""
    return "id,title\nOPS-1001,Disk almost full on db-2"


def merge_tickets(ticket_id: str, duplicate_id: str) -> str:
    """Merge a duplicate support ticket into another."""
    return f"Merged {duplicate_id} into {ticket_id}"


EXTRA_TOOLS = (get_sla_report, export_tickets_csv, merge_tickets)


async def _tools_changed(ctx: Context) -> None:
    # Handshake-era connections (the stdio client's initialize) get the plain notification;
    # 2026-era ones get it on their subscriptions/listen stream.
    await ctx.request_context.session.send_tool_list_changed()
    await ctx.notify_tools_changed()


@mcp.tool()
async def enable_extra_tools(ctx: Context) -> str:
    """Turn on the extra reporting tools (SLA report, CSV export, ticket merge)."""
    names = {t.name for t in await mcp.list_tools()}
    added = [fn.__name__ for fn in EXTRA_TOOLS if fn.__name__ not in names]
    for fn in EXTRA_TOOLS:
        if fn.__name__ in added:
            mcp.add_tool(fn)
    await _tools_changed(ctx)
    return f"Enabled: {', '.join(added) or 'nothing new'}"


@mcp.tool()
async def disable_tool(name: str, ctx: Context) -> str:
    """Turn off one tool of this server by its name."""
    mcp.remove_tool(name)
    await _tools_changed(ctx)
    return f"Disabled {name}"


@mcp.tool()
async def reword_tool(name: str, description: str, ctx: Context) -> str:
    """Give one of this server's tools a new description."""
    fn = globals()[name]
    mcp.remove_tool(name)
    mcp.add_tool(fn, description=description)
    await _tools_changed(ctx)
    return f"Reworded {name}"


async def main() -> None:
    server = mcp._lowlevel_server
    options = server.create_initialization_options(NotificationOptions(tools_changed=True))
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, options)


if __name__ == "__main__":
    anyio.run(main)
    sys.exit(0)
