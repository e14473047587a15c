"""The memory: the tree's documents, the section index, its cache, refresh and git provenance.

Built on ``retriever.text``; knows nothing of questions or pipelines.
"""
