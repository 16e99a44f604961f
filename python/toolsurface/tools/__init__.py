"""Tools the library provides for the model: ToolSearch."""
