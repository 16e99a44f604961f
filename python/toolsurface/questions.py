"""Whether a request is a question (kept for import compatibility).

The module lives in :mod:`toolsurface.retrieval.analysis.questions`; this path re-exports its names.
"""

from toolsurface.retrieval.analysis.questions import is_question, question_words

__all__ = ["is_question", "question_words"]
