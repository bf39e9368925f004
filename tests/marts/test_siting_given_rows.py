"""marts.siting, given rows -> expected rows: one row per pair of a cloud zone and an edge zone (or the
scenario's edge mix) of `siting_pairs` and edge device class, with R compute only and R with the answer's
edge design read from the model's rows (given in place of the table macro model_rows' rows over the pairs) on the
answer's basis, under the answer's method row (the table `siting_answers`); and the answer each scenario and class is read on
(sql/siting/answers.sql), given marts.verdict's rows."""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from typing import Any

import duckdb
import pyarrow as pa

from pipelines.identifiers import checked_identifier
from pipelines.model.methods import reference_tables
from pipelines.paths import sql_text
from pipelines.warehouse.tables import install_macros
from schemas.vocabulary import COMPUTE_ONLY

OWN = "pipeline"  # the scenario's own pattern
DESIGN = "diloco_pipeline"  # the answer's edge design
BASIS = "measured_rates"  # the answer's basis
DRIVER = ("volume", "per_use_hour", "full")  # network method, embodied policy, resize power
FETCHED = dt.datetime(2024, 6, 1, tzinfo=dt.UTC)


def run_sql(sql_file: str, given: Mapping[str, Sequence[Mapping[str, Any]]]) -> list[dict[str, Any]]:
    """A file of sql/ as run_mart runs a mart, where a given name may also be unqualified (the tables `siting_pairs`
    and `siting_answers` the asset creates); given rows named `model_rows` are the model's rows, the table macro
    model_rows redefined to return them whatever tables it is passed."""
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
    if "model_rows" in given:
        con.execute("create or replace temp macro model_rows(set_table, device_table, variant_table) as table "
                    "select * from main.model_rows")
    cursor = con.execute(sql_text(sql_file))
    names = [d[0] for d in cursor.description]
    return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]


def run_siting(given: Mapping[str, Sequence[Mapping[str, Any]]]) -> list[dict[str, Any]]:
    """sql/marts/siting.sql over the given rows."""
    return run_sql("marts/siting.sql", given)


def evaluated(variant: str, pattern: str, r: float, *, feasible: bool = True, basis: str = BASIS,
              method: tuple[str, str, str] = DRIVER, device: str = "laptop") -> dict:
    return {"scenario_id": "s", "variant_id": variant, "device_class": device, "basis": basis, "pattern": pattern,
            "network_method": method[0], "embodied_policy": method[1], "resize_power": method[2], "reduction_factor": r,
            "link_feasible": feasible}


def pair(cloud: str, edge: str, cloud_g: float, edge_g: float, mix: str | None = None) -> dict:
    return {"scenario_id": "s", "variant_id": f"{cloud}>{edge}", "cloud_zone": cloud, "edge_zone": edge, "edge_mix": mix,
            "cloud_grid_gco2e_per_kwh": cloud_g, "edge_grid_gco2e_per_kwh": edge_g, "cloud_intensity_basis": "hourly",
            "edge_intensity_basis": "monthly" if mix else "hourly", "year": 2023, "cloud_fetched_at": FETCHED, "edge_fetched_at": FETCHED}


def answer(device: str, design: str, basis: str = BASIS, method: tuple[str, str, str] = DRIVER) -> dict:
    return {"scenario_id": "s", "device_class": device, "basis": basis, "edge_design": design, "network_method": method[0],
            "embodied_policy": method[1], "resize_power": method[2]}


def test_r_per_pair_at_the_answers_basis_design_and_method_row() -> None:
    other_method = ("radio", "none", "full")
    model = []
    for variant, (r, r_comm, feasible) in {"FR>DE": (0.7, 0.5, True), "PL>DE": (7.2, 6.0, False), "FR>mix": (0.8, 0.6, True)}.items():
        model += [evaluated(variant, COMPUTE_ONLY, r), evaluated(variant, DESIGN, r_comm, feasible=feasible),
                  evaluated(variant, OWN, 99.0),  # the scenario's named pattern, not the answer's design
                  evaluated(variant, COMPUTE_ONLY, 0.01, method=other_method),  # not the verdict's driver
                  evaluated(variant, COMPUTE_ONLY, 0.02, basis="measured_throughput"),  # another basis
                  evaluated(variant, DESIGN, 0.03, basis="measured_throughput"),
                  # the phone's answer is the scenario's own pattern
                  evaluated(variant, COMPUTE_ONLY, r + 1, device="phone"), evaluated(variant, OWN, r_comm + 1, feasible=feasible, device="phone"),
                  evaluated(variant, DESIGN, 98.0, device="phone")]
    model.append(evaluated("base", COMPUTE_ONLY, 5.0))  # the scenario itself: no pair
    rows = run_siting({
        "core.scenarios": [{"scenario_id": "s", "accounting_frame": "attributional", "comm_pattern": OWN}],
        "siting_answers": [answer("laptop", DESIGN), answer("phone", OWN)],
        "model_rows": model,
        "siting_pairs": [pair("FR", "DE", 50.0, 350.0), pair("PL", "DE", 700.0, 350.0),
                         pair("FR", "mix", 50.0, 290.0, mix="DE 0.6, ES 0.4")],
    })
    rows.sort(key=lambda r: (r["device_class"], r["cloud_zone"], r["edge_zone"]))
    assert [(r["device_class"], r["cloud_zone"], r["edge_zone"], r["reduction_factor"], r["reduction_factor_with_comm"],
             r["link_feasible_with_comm"]) for r in rows] == [
        ("laptop", "FR", "DE", 0.7, 0.5, True), ("laptop", "FR", "mix", 0.8, 0.6, True), ("laptop", "PL", "DE", 7.2, 6.0, False),
        ("phone", "FR", "DE", 1.7, 1.5, True), ("phone", "FR", "mix", 1.8, 1.6, True), ("phone", "PL", "DE", 8.2, 7.0, False)]
    fr_de, fr_mix, pl_de = rows[:3]
    assert {(r["scenario_id"], r["accounting_frame"], r["device_class"], r["basis"], r["comm_pattern"], r["edge_design"])
            for r in rows} == {("s", "attributional", "laptop", BASIS, OWN, DESIGN), ("s", "attributional", "phone", BASIS, OWN, OWN)}
    assert {(r["network_method"], r["embodied_policy"], r["resize_power"]) for r in rows} == {DRIVER}
    assert (pl_de["cloud_gco2e_per_kwh"], pl_de["edge_gco2e_per_kwh"], pl_de["year"]) == (700.0, 350.0, 2023)
    assert (fr_mix["edge_mix"], fr_mix["edge_gco2e_per_kwh"], fr_mix["edge_intensity_basis"]) == ("DE 0.6, ES 0.4", 290.0, "monthly")
    assert fr_de["edge_mix"] is None and fr_de["cloud_fetched_at"] == FETCHED


def verdict_row(scenario: str, device: str, basis: str, design: str, method: tuple[str, str, str], *, headline: bool = True,
                best: bool = True, driver: tuple[str, str, str] = DRIVER) -> dict:
    return {"scenario_id": scenario, "device_class": device, "basis": basis, "edge_design": design, "network_method": method[0],
            "embodied_policy": method[1], "resize_power": method[2], "is_headline": headline, "is_best_design": best,
            "verdict_driver_method": driver[0], "verdict_driver_policy": driver[1], "verdict_driver_resize_power": driver[2]}


def test_the_answer_is_the_verdicts_headline_best_design_at_its_driving_method_row() -> None:
    other = ("radio", "none", "full")
    verdict = [
        verdict_row("s", "laptop", BASIS, DESIGN, DRIVER),  # the answer
        verdict_row("s", "laptop", BASIS, OWN, DRIVER, best=False),  # a design that is not the best
        verdict_row("s", "laptop", BASIS, OWN, other),  # the best design under another method row
        verdict_row("s", "laptop", "measured_throughput", OWN, DRIVER, headline=False),  # beside the headline
        verdict_row("s", "phone", BASIS, OWN, DRIVER),
        # the paper's frame has no is_answer row; its headline best row at its driver is read the same way
        verdict_row("p", "laptop", "peak_flops", "radio_window", other, driver=other),
        verdict_row("q", "laptop", BASIS, OWN, DRIVER),  # a scenario with no siting zones
    ]
    rows = run_sql("siting/answers.sql", {"marts.verdict": verdict,
                                          "siting_pairs": [{"scenario_id": "s"}, {"scenario_id": "s"}, {"scenario_id": "p"}]})
    assert [tuple(r.values()) for r in rows] == [
        ("p", "laptop", "peak_flops", "radio_window", *other),
        ("s", "laptop", BASIS, DESIGN, *DRIVER),
        ("s", "phone", BASIS, OWN, *DRIVER)]
    assert list(rows[0]) == ["scenario_id", "device_class", "basis", "edge_design", "network_method", "embodied_policy", "resize_power"]
