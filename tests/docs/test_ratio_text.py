"""R is printed alike everywhere: two decimals from 0.095 up, two significant figures below (a small R is not 0.00)."""

from __future__ import annotations

import pytest

from dashboards.shell import ratio_text
from pipelines.warehouse.answer_docs import _r


@pytest.mark.parametrize(("value", "text"), [
    (0.0, "0.00"), (0.00443, "0.0044"), (0.0549, "0.055"), (0.0949, "0.095"), (0.0951, "0.10"), (0.1034, "0.10"),
    (1.5, "1.50"), (12.345, "12.35"), (0.000431, "0.00043"),
])
def test_pages_and_readme_print_r_alike(value: float, text: str) -> None:
    """dashboards.shell.ratio_text (the pages, ``make run``) and the README's renderer give the same text."""
    assert (ratio_text(value), _r(value)) == (text, text)
