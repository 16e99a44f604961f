"""The two engines behind one protocol, and the built index of one generation.

The backend (native or pure), the pure engine with its alias matching and boosted merge.
"""
