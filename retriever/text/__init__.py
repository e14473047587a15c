"""Text: reading files, parsing markdown, inline markup, term analysis and vocabularies.

The lowest layer above errors/config: pure functions over strings and the one module (``reader``)
that touches the file system.
"""
