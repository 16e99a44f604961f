"""The package version; the native module must report the same one to be used."""

__version__ = "0.1.0"
