"""Energy of benchmark runs from their power logs.

- :mod:`.integration`: trapezoid and counter integration of power samples, per run;
- :mod:`.runs`: one ``staging.benchmark_runs`` row per run, sampled or reported;
- :mod:`.series`: the keys the runs must keep (run ids, series, the paper's series), checked
  by the build and by ``register``;
- :mod:`.student_t`: the Student-t critical value of the Table 1 confidence intervals.
"""
