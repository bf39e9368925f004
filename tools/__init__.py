"""Tools beside the code location: recording power logs (``edge-carbon-capture``) and
generating the synthesised Table 1 logs. They may use the pipelines' ingest, warehouse and
model layers; the pipelines never import them."""
