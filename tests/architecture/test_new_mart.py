"""A new mart is two new files in two folders and no edit elsewhere: its SQL (``sql/marts/<table>.sql``, declared by
its ``-- asset:`` header) and its contract (a module of ``schemas/`` whose model names the table, ``__tables__``).
In a scratch copy of the project, the two files alone make an asset of the Dagster definitions with the contract's
checks, and it builds over the published warehouse's rows."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from pipelines.paths import PROJECT_ROOT, SOURCES_ENV, sources_dir

#: The new mart: how many rows of the model each family holds, a table no build has.
MART_SQL = """-- asset: group=marts
-- marts.family_rows: how many rows of the model (core.model_evaluation) each family of core.variants holds.
select family, count(*) as model_rows
from core.model_evaluation
group by family
order by family
"""
CONTRACT = '''"""marts.family_rows' contract."""

import pandera.polars as pa


class FamilyRows(pa.DataFrameModel):
    """marts.family_rows: the model's rows per family. Grain: one family of core.variants."""

    __tables__ = ("marts.family_rows",)

    family: str = pa.Field(unique=True, description="A family of core.variants.")
    model_rows: int = pa.Field(gt=0, description="Its rows of core.model_evaluation.")
'''
#: Run in the copy: the mart's asset in the definitions, and its build over a copy of the published warehouse.
SCRIPT = """
import json, sys
import duckdb
import dagster as dg
from pipelines.definitions import defs
from pipelines.lib.tables import declared_tables
declared = {d.table.table: d for d in declared_tables()}
mart = declared["marts.family_rows"]
graph = defs.resolve_asset_graph()
key = dg.AssetKey(["marts", "family_rows"])
con = duckdb.connect(sys.argv[1])
result = mart.table.build(con)
rows = con.execute("select family, model_rows from marts.family_rows order by family").fetchall()
print(json.dumps({"model": mart.table.model.__name__, "group": mart.group, "asset": graph.has(key),
                  "deps": sorted("/".join(k.path) for k in graph.get(key).parent_keys),
                  "checks": [c.passed for c in result.check_results], "rows": rows}))
"""


def test_a_new_mart_is_its_sql_and_its_contract(tmp_path: Path, built_warehouse: Path) -> None:
    root = tmp_path / "copy"
    for folder in ("pipelines", "schemas", "sql", "dashboards"):
        shutil.copytree(PROJECT_ROOT / folder, root / folder, ignore=shutil.ignore_patterns("__pycache__", "site"))
    shutil.copy(PROJECT_ROOT / "pyproject.toml", root / "pyproject.toml")
    (root / "sql" / "marts" / "family_rows.sql").write_text(MART_SQL, encoding="utf-8")
    (root / "schemas" / "family_rows.py").write_text(CONTRACT, encoding="utf-8")
    warehouse = tmp_path / "warehouse.duckdb"
    shutil.copy(built_warehouse, warehouse)
    env = {**os.environ, "PYTHONPATH": str(root), SOURCES_ENV: str(sources_dir())}  # the shipped sources, read in place
    done = subprocess.run([sys.executable, "-c", SCRIPT, str(warehouse)], cwd=root, env=env, capture_output=True, text=True,
                          timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-4000:]
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert found["model"] == "FamilyRows" and found["group"] == "marts" and found["asset"]
    assert found["deps"] == ["core/model_evaluation"]
    assert found["checks"] and all(found["checks"])
    families = dict(found["rows"])
    assert families["base"] > 0 and {"model_sizes", "policies", "tornado", "grid"} <= set(families)
