"""The providers: tool formats and limits, safe names, Gemini's parameters, the doctor's report.

The package re-exports :mod:`toolsurface.providers.formats`, the old ``providers`` module.
"""

from toolsurface.providers.formats import (
    PROVIDERS,
    ProviderName,
    ProviderNameError,
    ProviderSpec,
    gemini_declaration,
    name_problems,
    provider_spec,
    render_tools,
)

__all__ = [
    "PROVIDERS",
    "ProviderName",
    "ProviderNameError",
    "ProviderSpec",
    "gemini_declaration",
    "name_problems",
    "provider_spec",
    "render_tools",
]
