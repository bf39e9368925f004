"""The table is the unit: a table built from its SQL file and contract alone is declared by the
file's ``-- asset:`` header and made an asset by one loader; no hand-written asset function only
runs its SQL."""

from __future__ import annotations

import ast

import dagster as dg

from pipelines.lib.tables import ASSET_HEADER, declared_tables, leading_comment
from pipelines.paths import PROJECT_ROOT

ASSETS = PROJECT_ROOT / "pipelines" / "defs" / "assets"


def only_runs_its_sql(function: ast.FunctionDef) -> bool:
    """Whether ``function`` is an asset with nothing of its own (no checks, config or automation: its
    decorator names its group at most) whose whole body, its docstring aside, is ``return X.build(warehouse.connection())``."""
    decorated = any(isinstance(d, ast.Call) and isinstance(d.func, ast.Attribute) and d.func.attr == "asset"
                    and {k.arg for k in d.keywords} <= {"group"} for d in function.decorator_list)
    body = [s for s in function.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
    if not decorated or len(body) != 1 or not isinstance(body[0], ast.Return) or not isinstance(body[0].value, ast.Call):
        return False
    call = body[0].value
    return (isinstance(call.func, ast.Attribute) and call.func.attr == "build" and len(call.args) == 1 and not call.keywords
            and ast.unparse(call.args[0]) == "warehouse.connection()")


def test_no_asset_function_only_runs_its_sql() -> None:
    wrappers = [f"{path.name}:{node.name}" for path in sorted(ASSETS.glob("*.py")) if path.name != "sql_tables.py"
                for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
                if isinstance(node, ast.FunctionDef) and only_runs_its_sql(node)]
    assert wrappers == [], "declare these tables in their SQL file (-- asset: group=...) instead"


def test_the_check_finds_a_wrapper() -> None:
    source = ("@T.asset(group='marts')\ndef t(warehouse):\n    '''Doc.'''\n    return T.build(warehouse.connection())\n\n"
              "@T.asset(group='marts')\ndef u(config, warehouse):\n    return T.build(warehouse.connection(), {'x': config.x})\n\n"
              "@T.asset(group='marts', check_specs=[rule.spec])\ndef v(warehouse):\n    return T.build(warehouse.connection())\n")
    found = [n.name for n in ast.walk(ast.parse(source)) if isinstance(n, ast.FunctionDef) and only_runs_its_sql(n)]
    assert found == ["t"]


def test_every_declared_table_is_one_asset_of_the_loader() -> None:
    from pipelines.definitions import defs

    declared = declared_tables()
    headers = sorted(p.relative_to(PROJECT_ROOT / "sql").as_posix() for schema in ("core", "marts")
                     for p in (PROJECT_ROOT / "sql" / schema).glob("*.sql") if ASSET_HEADER.search(p.read_text(encoding="utf-8")))
    assert sorted(d.table.sql_file for d in declared) == headers and len(headers) >= 8
    graph = defs.resolve_asset_graph()
    for item in declared:
        node = graph.get(item.table.key)
        assert node.group_name == item.group and node.description == item.description
        assets_def = defs.resolve_assets_def(item.table.key)
        assert assets_def.op.name == item.table.key.to_python_identifier()
        assert {spec.name for spec in assets_def.check_specs} >= {"pandera_schema"}
        assert {key for key in node.parent_keys} == {dg.AssetKey(t.split(".")) for t in item.table.reads()}


def test_the_description_is_the_files_leading_comment() -> None:
    sql = "-- asset: group=marts\n-- marts.x: one row\n-- per zone.\nselect 1\n-- not this\n"
    assert leading_comment(sql) == "marts.x: one row per zone."
    assert ASSET_HEADER.search(sql).group(1) == "marts"
    assert ASSET_HEADER.search("-- asset: group=marts, extra\n") is None


#: The marts that read the model's stored evaluation (core.model_evaluation) instead of evaluating again.
READ_THE_EVALUATION = ("marts/lifecycle_carbon.sql", "marts/fleet_equivalence.sql", "marts/verdict.sql")


def test_the_model_is_evaluated_once_into_a_table_the_marts_read() -> None:
    """core.model_evaluation holds the model's rows; the marts that shape them read the table, and no asset
    hands the model's output to SQL as a relation registered from Python."""
    from pipelines.warehouse.lineage import tables_read_by

    for sql_file in READ_THE_EVALUATION:
        assert "core.model_evaluation" in tables_read_by(sql_file), sql_file
    handed = [f"{path.name}:{node.lineno}" for path in sorted(ASSETS.glob("*.py"))
              for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
              if isinstance(node, ast.Call) and any(k.arg == "relations" for k in node.keywords)]
    assert handed == []
