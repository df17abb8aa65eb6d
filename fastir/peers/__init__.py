"""The peers' interfaces backed by fastir: pytrec_eval's module (``pytrec_eval``), ir_measures'
functions (``ir_measures``) and provider (``provider``), ranx's (``ranx``, with ``ranx_data``:
its Qrels and Run, ``ranx_report``: its Report) and torchmetrics' retrieval metrics
(``torchmetrics``). Public under ``fastir.pytrec_eval``, ``fastir.ir_measures``,
``fastir.ranx`` and ``fastir.torchmetrics``; each peer's library is imported only by the module
that needs it."""
