"""Every path the project uses, from a source checkout or from an installed wheel.

In a source checkout (``pyproject.toml`` and ``sql/`` beside the packages) every default is
below the repository root, whatever the current directory. An installed wheel carries the
SQL as package data (``pipelines/sql/``) but not ``sources/``: it reads the sources from
``$EDGE_CARBON_SOURCES`` (else ``./sources``), and publishes to ``./warehouse/`` unless
``$EDGE_CARBON_WAREHOUSE`` says otherwise.
"""

from __future__ import annotations

import os
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path

PACKAGE_DIR: Path = Path(__file__).resolve().parent
PROJECT_ROOT: Path = PACKAGE_DIR.parent
#: True when running from a source checkout, False from an installed wheel.
IN_CHECKOUT: bool = (PROJECT_ROOT / "pyproject.toml").is_file() and (PROJECT_ROOT / "sql").is_dir()

#: Environment variable that points the pipeline at another sources folder (same layout).
SOURCES_ENV = "EDGE_CARBON_SOURCES"
#: Environment variable that overrides where the published warehouse lives.
WAREHOUSE_ENV = "EDGE_CARBON_WAREHOUSE"


def default_root() -> Path:
    """Where the defaults live: the repository root in a checkout, else the current directory."""
    return PROJECT_ROOT if IN_CHECKOUT else Path.cwd().resolve()


SOURCES_DIR: Path = default_root() / "sources"
MANIFEST_DIR: Path = SOURCES_DIR / "manifest"
DEFAULT_WAREHOUSE: Path = default_root() / "warehouse" / "edge_carbon.duckdb"
#: The pipeline's SQL: ``sql/`` in a checkout, the ``pipelines/sql/`` package data when installed.
SQL_DIR: Path | Traversable = PROJECT_ROOT / "sql" if IN_CHECKOUT else resources.files("pipelines") / "sql"


def warehouse_path() -> Path:
    """The published warehouse: ``$EDGE_CARBON_WAREHOUSE``, else ``warehouse/edge_carbon.duckdb``.

    ``warehouse/`` is the checkout's, or, for an installed package, the current directory's.
    """
    override = os.environ.get(WAREHOUSE_ENV)
    if override:
        return Path(override).expanduser().resolve()
    return DEFAULT_WAREHOUSE if IN_CHECKOUT else default_root() / "warehouse" / "edge_carbon.duckdb"


def sources_dir() -> Path:
    """The sources folder: ``$EDGE_CARBON_SOURCES``, else the checkout's ``sources/``.

    An installed package has no shipped sources: without the variable it uses ``./sources``
    and, if there is none, raises an error that names the variable.
    """
    override = os.environ.get(SOURCES_ENV)
    if override:
        return Path(override).expanduser().resolve()
    if IN_CHECKOUT:
        return SOURCES_DIR
    here = default_root() / "sources"
    if not here.is_dir():
        raise FileNotFoundError(
            f"no sources folder: {here} does not exist. An installed edge-carbon reads its inputs from "
            f"${SOURCES_ENV}; set it to a checkout's sources/ folder (or run from the folder that holds sources/)."
        )
    return here


def sql_text(relative: str) -> str:
    """Read a ``.sql`` file below ``sql/`` (for example ``"checks/orphan_source_ids.sql"``)."""
    return SQL_DIR.joinpath(*relative.split("/")).read_text(encoding="utf-8")


#: The files that define the model's SQL macros, in the order they are created: the small formulas
#: (``macros.sql``), then the model's one formula over tables of parameter sets (``model_rows.sql``).
MACRO_FILES: tuple[str, ...] = ("model/macros.sql", "model/model_rows.sql")


def macro_text() -> str:
    """The model's SQL macros (:data:`MACRO_FILES`) as one script: run it, and any SQL file of the model runs by hand."""
    return "\n".join(sql_text(relative) for relative in MACRO_FILES)
