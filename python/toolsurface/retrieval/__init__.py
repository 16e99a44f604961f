"""Retrieval: analysis, the two engines, the lexicon and rank fusion."""
