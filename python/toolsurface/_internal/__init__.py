"""Helpers that are no concept of their own.

The collector paused over a batch, invisible characters stripped, the JSON check. They
import nothing of the package but its errors.
"""
