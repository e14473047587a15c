"""The optional LLM: the one client that talks to a model, the guided stages, and their prompts.
"""
