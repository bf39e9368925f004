"""Every path the project uses, derived from one project-root constant (never the cwd)."""

from __future__ import annotations

import os
from pathlib import Path

PROJECT_ROOT: Path = Path(__file__).resolve().parents[1]
SOURCES_DIR: Path = PROJECT_ROOT / "sources"
MANIFEST_DIR: Path = SOURCES_DIR / "manifest"
#: Environment variable that points the pipeline at another sources folder (same layout).
SOURCES_ENV = "EDGE_CARBON_SOURCES"
SQL_DIR: Path = PROJECT_ROOT / "sql"

#: Environment variable that overrides where the published warehouse lives.
WAREHOUSE_ENV = "EDGE_CARBON_WAREHOUSE"
DEFAULT_WAREHOUSE: Path = PROJECT_ROOT / "warehouse" / "edge_carbon.duckdb"


def warehouse_path() -> Path:
    """The published warehouse: ``$EDGE_CARBON_WAREHOUSE`` or ``warehouse/edge_carbon.duckdb``."""
    override = os.environ.get(WAREHOUSE_ENV)
    return Path(override).expanduser().resolve() if override else DEFAULT_WAREHOUSE


def sources_dir() -> Path:
    """The sources folder: ``$EDGE_CARBON_SOURCES`` or the shipped ``sources/``."""
    override = os.environ.get(SOURCES_ENV)
    return Path(override).expanduser().resolve() if override else SOURCES_DIR


def sql_text(relative: str) -> str:
    """Read a ``.sql`` file below ``sql/`` (for example ``"checks/orphan_source_ids.sql"``)."""
    return (SQL_DIR / relative).read_text(encoding="utf-8")
