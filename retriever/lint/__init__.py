"""``retriever check`` and ``retriever init``: lint rules over a memory tree, their config and reports, the scaffold.
"""
