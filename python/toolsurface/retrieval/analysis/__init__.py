"""What a text says: index terms, Russian word forms, a question, a read.

The pure analyser (text to index terms), the lexicon's Russian forms, whether a request is a
question and whether a tool's name says it only reads.
"""
