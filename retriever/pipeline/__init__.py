"""The retrieval pipeline: one module per stage, the order written once in ``pipeline.pipeline``.

    validate -> triage -> target -> extract -> score -> assemble -> report
"""
