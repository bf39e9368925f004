"""The Student-t critical value that ``staging.benchmark_series`` binds into its SQL (DuckDB
has no t quantile), from scipy's Student-t distribution functions (``scipy.special.stdtr`` and
``stdtrit``, the functions behind ``scipy.stats.t``, without importing all of scipy.stats)."""

from __future__ import annotations

from scipy import special


def t_two_sided_mass(t: float, df: int) -> float:
    """P(|T| <= t) for Student's t with ``df`` (>= 1) degrees of freedom."""
    if df < 1:
        raise ValueError("degrees of freedom must be >= 1")
    return float(special.stdtr(df, t) - special.stdtr(df, -t))


def t_quantile(df: int, confidence: float = 0.95) -> float:
    """Two-sided Student-t critical value: the t with P(|T| <= t) = ``confidence``.

    For the 95% CI of a mean of n runs use ``t_quantile(n - 1)`` (= t(0.975, n - 1)).
    """
    if df < 1:
        raise ValueError("degrees of freedom must be >= 1")
    if not 0 < confidence < 1:
        raise ValueError("confidence must lie in (0, 1)")
    return float(special.stdtrit(df, (1 + confidence) / 2))
