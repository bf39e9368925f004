"""marts.siting, given rows -> expected rows: one row per pair of a cloud zone and an edge zone (or the
scenario's edge mix) of `siting_pairs` and edge device class, with R compute only and R with the
scenario's own pattern read from the model's rows (the view `model_evaluation`) on the measured basis,
under the method row marts.verdict names as its driver for the scenario and class on that basis."""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from typing import Any

import duckdb
import pyarrow as pa

from pipelines.defs.assets.siting import SITING_BASIS
from pipelines.identifiers import checked_identifier
from pipelines.model.methods import reference_tables
from pipelines.paths import sql_text
from pipelines.warehouse.tables import install_macros
from schemas.vocabulary import COMPUTE_ONLY

OWN = "pipeline"  # the scenario's own pattern
DRIVER = ("volume", "per_use_hour", "full")  # network method, embodied policy, resize power
FETCHED = dt.datetime(2024, 6, 1, tzinfo=dt.UTC)


def run_siting(given: Mapping[str, Sequence[Mapping[str, Any]]]) -> list[dict[str, Any]]:
    """sql/marts/siting.sql as run_mart runs a mart, where a given name may also be unqualified (the temporary
    view `model_evaluation` and table `siting_pairs` the asset creates), with the asset's basis bound."""
    con = duckdb.connect()
    con.execute("set TimeZone = 'UTC'")
    install_macros(con)
    references = reference_tables()
    tables = {**{name: references[name] for name in ("core.frames", "core.patterns")},
              **{name: pa.Table.from_pylist(list(rows)) for name, rows in given.items()}}
    for name, rows in tables.items():
        # a schema-qualified name is checked as run_mart checks it; an unqualified one as main.<name>
        table = checked_identifier(name if "." in name else f"main.{name}")
        con.execute(f"create schema if not exists {table.split('.')[0]}")
        con.register("_given", rows)
        con.execute(f"create table {table} as select * from _given")  # noqa: S608 - a checked name
        con.unregister("_given")
    cursor = con.execute(sql_text("marts/siting.sql"), {"basis": SITING_BASIS})
    names = [d[0] for d in cursor.description]
    return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]


def evaluated(variant: str, pattern: str, r: float, *, feasible: bool = True, basis: str = SITING_BASIS,
              method: tuple[str, str, str] = DRIVER) -> dict:
    return {"scenario_id": "s", "variant_id": variant, "device_class": "laptop", "basis": basis, "pattern": pattern,
            "network_method": method[0], "embodied_policy": method[1], "resize_power": method[2], "reduction_factor": r,
            "link_feasible": feasible}


def pair(cloud: str, edge: str, cloud_g: float, edge_g: float, mix: str | None = None) -> dict:
    return {"scenario_id": "s", "variant_id": f"{cloud}>{edge}", "cloud_zone": cloud, "edge_zone": edge, "edge_mix": mix,
            "cloud_grid_gco2e_per_kwh": cloud_g, "edge_grid_gco2e_per_kwh": edge_g, "cloud_intensity_basis": "hourly",
            "edge_intensity_basis": "monthly" if mix else "hourly", "year": 2023, "cloud_fetched_at": FETCHED, "edge_fetched_at": FETCHED}


def verdict(basis: str, method: tuple[str, str, str]) -> dict:
    return {"scenario_id": "s", "device_class": "laptop", "basis": basis, "verdict_driver_method": method[0],
            "verdict_driver_policy": method[1], "verdict_driver_resize_power": method[2]}


def test_r_per_pair_under_the_verdicts_driving_method_row_on_the_measured_basis() -> None:
    other_method = ("radio", "none", "full")
    model = []
    for variant, (r, r_comm, feasible) in {"FR>DE": (0.7, 0.5, True), "PL>DE": (7.2, 6.0, False), "FR>mix": (0.8, 0.6, True)}.items():
        model += [evaluated(variant, COMPUTE_ONLY, r), evaluated(variant, OWN, r_comm, feasible=feasible),
                  evaluated(variant, "ring_allreduce", 99.0),  # not the scenario's pattern
                  evaluated(variant, COMPUTE_ONLY, 0.01, method=other_method),  # not the verdict's driver
                  evaluated(variant, COMPUTE_ONLY, 0.02, basis="peak_flops")]  # another basis
    model.append(evaluated("base", COMPUTE_ONLY, 5.0))  # the scenario itself: no pair
    rows = run_siting({
        "core.scenarios": [{"scenario_id": "s", "accounting_frame": "attributional", "comm_pattern": OWN}],
        "marts.verdict": [verdict(SITING_BASIS, DRIVER), verdict(SITING_BASIS, DRIVER),  # one row per pattern: the same driver
                          verdict("peak_flops", other_method)],
        "model_evaluation": model,
        "siting_pairs": [pair("FR", "DE", 50.0, 350.0), pair("PL", "DE", 700.0, 350.0),
                         pair("FR", "mix", 50.0, 290.0, mix="DE 0.6, ES 0.4")],
    })
    rows.sort(key=lambda r: (r["cloud_zone"], r["edge_zone"]))
    assert [(r["cloud_zone"], r["edge_zone"], r["reduction_factor"], r["reduction_factor_with_comm"], r["link_feasible_with_comm"])
            for r in rows] == [("FR", "DE", 0.7, 0.5, True), ("FR", "mix", 0.8, 0.6, True), ("PL", "DE", 7.2, 6.0, False)]
    fr_de, fr_mix, pl_de = rows
    assert {(r["scenario_id"], r["accounting_frame"], r["device_class"], r["basis"], r["comm_pattern"]) for r in rows} == {
        ("s", "attributional", "laptop", SITING_BASIS, OWN)}
    assert {(r["network_method"], r["embodied_policy"], r["resize_power"]) for r in rows} == {DRIVER}
    assert (pl_de["cloud_gco2e_per_kwh"], pl_de["edge_gco2e_per_kwh"], pl_de["year"]) == (700.0, 350.0, 2023)
    assert (fr_mix["edge_mix"], fr_mix["edge_gco2e_per_kwh"], fr_mix["edge_intensity_basis"]) == ("DE 0.6, ES 0.4", 290.0, "monthly")
    assert fr_de["edge_mix"] is None and fr_de["cloud_fetched_at"] == FETCHED
