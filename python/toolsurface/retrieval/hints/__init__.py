"""Learned hints: requests a host taught the registry, kept and indexed as the sixth field."""
