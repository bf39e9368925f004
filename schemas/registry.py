"""Every table's contract, found where it is written: each pandera model of a module of ``schemas/`` that names
the warehouse table(s) it is the contract of (its ``__tables__``) is that table's model. A table is its files: its
SQL (``sql/<schema>/<table>.sql``) and a contract naming it, in a new module or an existing one; no list to edit.
"""

from __future__ import annotations

import importlib
import pkgutil
from types import ModuleType

import pandera.polars as pa

import schemas


def contracts(package: ModuleType = schemas) -> dict[str, type[pa.DataFrameModel]]:
    """Table -> its model, over every module of ``package``: each model class that declares ``__tables__`` itself (a
    model that extends another names its own tables). Two models claiming one table is an error naming both."""
    found: dict[str, type[pa.DataFrameModel]] = {}
    for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda m: m.name):
        module = importlib.import_module(f"{package.__name__}.{info.name}")
        for value in vars(module).values():
            if not (isinstance(value, type) and issubclass(value, pa.DataFrameModel) and value.__module__ == module.__name__):
                continue
            for table in value.__dict__.get("__tables__", ()):
                other = found.setdefault(table, value)
                if other is not value:
                    raise ValueError(f"{table} has two contracts: {other.__module__}.{other.__name__} and "
                                     f"{value.__module__}.{value.__name__}; keep one")
    return found
