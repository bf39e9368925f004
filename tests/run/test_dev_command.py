"""``make dev`` and what the docs promise after ``make run``: the code location loads without
Dagster's BetaWarning (that category only), docs/dagster.md names menus the installed Dagster UI
has, and the DuckDB shell the docs use (``.venv/bin/duckdb``) is a base dependency."""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from importlib.util import find_spec
from pathlib import Path

from pipelines.paths import PROJECT_ROOT
from tests.helpers import pinned_versions

PYPROJECT = tomllib.loads((PROJECT_ROOT / "pyproject.toml").read_text(encoding="utf-8"))
#: The markdown files a user reads: the README and docs/.
DOCS = [PROJECT_ROOT / "README.md", *sorted((PROJECT_ROOT / "docs").glob("*.md"))]


def test_the_code_location_loads_without_beta_warnings_and_keeps_the_others() -> None:
    """As ``make dev``'s code server imports it, with every warning shown (``-W default``)."""
    script = ("import warnings, dagster as dg, pipelines.definitions\n"
              "warnings.warn('a beta marker', dg.BetaWarning)\n"
              "warnings.warn('a preview marker', dg.PreviewWarning)\n"
              "warnings.warn('a user marker', UserWarning)\n"
              "warnings.warn('a deprecation marker', DeprecationWarning)\n")
    done = subprocess.run([sys.executable, "-W", "default", "-c", script], cwd=PROJECT_ROOT, capture_output=True, text=True,
                          timeout=300, check=True)
    assert "BetaWarning" not in done.stderr and "beta marker" not in done.stderr
    for shown in ("PreviewWarning: a preview marker", "UserWarning: a user marker", "DeprecationWarning: a deprecation marker"):
        assert shown in done.stderr, done.stderr


def ui_labels() -> str:
    """The text of the installed Dagster UI's JavaScript bundle (dagster-webserver's webapp)."""
    spec = find_spec("dagster_webserver")
    assert spec is not None and spec.origin is not None
    return "\n".join(path.read_text(encoding="utf-8", errors="replace")
                     for path in sorted((Path(spec.origin).parent / "webapp").rglob("*.js")))


def test_the_dagster_page_names_only_menus_the_installed_ui_has() -> None:
    text = (PROJECT_ROOT / "docs" / "dagster.md").read_text(encoding="utf-8")
    named = sorted(set(re.findall(r"\*\*([^*]+)\*\*", text)))
    assert {"Lineage", "Catalog", "Overview", "Columns", "Checks", "Materialize all"} <= set(named), named
    bundle = ui_labels()
    missing = [label for label in named if f'"{label}"' not in bundle]
    assert missing == [], f"docs/dagster.md names UI labels the installed dagster-webserver does not have: {missing}"
    # the menu path of older Dagster releases is gone
    assert '"View global asset lineage"' not in bundle and "View global asset lineage" not in text


def test_the_duckdb_shell_comes_with_make_run() -> None:
    """``make run`` installs the base dependencies, so every doc that shows ``.venv/bin/duckdb`` can
    be followed after it: the shell's package is one of them, pinned, and no doc says otherwise."""
    assert "duckdb-cli" in PYPROJECT["project"]["dependencies"]
    assert all("duckdb-cli" not in extra for extra in PYPROJECT["project"]["optional-dependencies"].values())
    assert "duckdb-cli" in pinned_versions()
    mentioning = [path.relative_to(PROJECT_ROOT).as_posix() for path in DOCS if ".venv/bin/duckdb" in path.read_text(encoding="utf-8")]
    assert "docs/queries.md" in mentioning
    for name in mentioning:
        text = (PROJECT_ROOT / name).read_text(encoding="utf-8")
        assert not re.search(r"dev extra[^.]*\.venv/bin/duckdb", text), f"{name} says only the dev extra installs .venv/bin/duckdb"
