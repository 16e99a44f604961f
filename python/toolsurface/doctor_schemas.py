"""The doctor's per-provider report of what each tool is sent (kept for import compatibility).

The module lives in :mod:`toolsurface.providers.schemas`; this path re-exports its names.
"""

from toolsurface.providers.schemas import SchemaIssue, schema_issues

__all__ = ["SchemaIssue", "schema_issues"]
