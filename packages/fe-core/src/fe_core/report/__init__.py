"""Report writing (the `report` extra): PyLaTeX helpers (`latex`), document output (`latex_document`) and the
traceability summaries (`traceability`). Modules import PyLaTeX when they are imported: import them on use."""
__all__: list = []
