"""The Monte Carlo benchmark's baselines: the same computation written another way, to time the
model against and to check it by. Not a second model: the model is ``sql/core/model_evaluation.sql``
(run by :mod:`pipelines.model.formula`), and these are held to it (``make bench``, tests/bench/test_bench.py).
"""
