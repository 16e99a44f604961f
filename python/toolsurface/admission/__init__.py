"""Call admission and the text it gives the model.

``admit`` (verdicts and effects), near names, names in another case, a tool's line, group
rules and the run's mark.
"""
