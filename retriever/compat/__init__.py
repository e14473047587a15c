"""Compatibility surfaces over the same core: seed 002 ``get_memory`` and seed 003 ``/memories/retrieve``.
"""
