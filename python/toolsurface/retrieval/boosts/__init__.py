"""Boosts of a search: the groups a request mentions, and the question boost."""
