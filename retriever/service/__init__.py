"""The tool service every transport calls: tools, sessions, the request log and its stores.
"""
