"""marts.siting reads the verdict's answer: each scenario's headline basis and, per device class, the best
admissible edge design at the method row that sets the verdict (marts.verdict's answer row); and R at a pair
of zones is the model's own at those two intensities, recomputed by hand from the terms of the model's
evaluation of the scenario (core.model_evaluation), which are linear in each side's grid intensity."""

from __future__ import annotations

from pathlib import Path

import duckdb
import polars as pl
import pytest

from schemas.vocabulary import COMPUTE_ONLY, PAPER_FRAME

SITED = ("paper_text", "realistic_attributional", "realistic_consequential")
#: The method row, basis and design columns marts.siting shares with marts.verdict.
READING = ["basis", "edge_design", "network_method", "embodied_policy", "resize_power"]


def read(path: Path, sql: str, params: dict | None = None) -> pl.DataFrame:
    con = duckdb.connect(str(path), read_only=True)
    try:
        return pl.from_arrow(con.sql(sql, params=params or {}).to_arrow_table())  # type: ignore[return-value]
    finally:
        con.close()


def siting_readings(path: Path) -> pl.DataFrame:
    """marts.siting's basis, edge design and method row per scenario and class (one each)."""
    return read(path, "select distinct scenario_id, device_class, accounting_frame, basis, edge_design, network_method, "
                      "embodied_policy, resize_power from marts.siting order by scenario_id, device_class")


def test_siting_reads_each_scenarios_answer_basis_design_and_method_row(built_warehouse: Path) -> None:
    readings = siting_readings(built_warehouse)
    assert readings.select("scenario_id", "device_class").rows() == [(s, d) for s in SITED for d in ("laptop", "phone")]
    # outside the paper's frame: marts.verdict's is_answer row, column for column
    answers = read(built_warehouse, "select scenario_id, device_class, basis, edge_design, network_method, embodied_policy, "
                                    "resize_power from marts.verdict where is_answer order by scenario_id, device_class")
    outside = readings.filter(pl.col("accounting_frame") != PAPER_FRAME).drop("accounting_frame")
    assert outside.height == 4
    assert outside.rows() == answers.join(outside.select("scenario_id", "device_class"), on=["scenario_id", "device_class"],
                                          how="semi").rows()
    # the basis is the scenario's headline: its headline_basis parameter, or the stated count's basis where it states one
    headline = dict(read(built_warehouse, "select scenario_id, headline_basis from core.scenarios").iter_rows())
    for row in outside.iter_rows(named=True):
        assert row["basis"] == headline[row["scenario_id"]] == "measured_rates"
    # the paper's frame has no answer row: the verdict's headline row of its best design at its driving method row,
    # the stated count's basis (peak_flops) and the scenario's own pattern (its frame has no edge designs)
    paper = readings.filter(pl.col("accounting_frame") == PAPER_FRAME)
    assert set(paper.select(READING).rows()) == {("peak_flops", "radio_window", "radio", "none", "full")}
    for row in paper.iter_rows(named=True):
        [verdict] = read(built_warehouse, "select * from marts.verdict where scenario_id = $s and device_class = $d and is_headline "
                                          "and is_best_design and network_method = verdict_driver_method "
                                          "and embodied_policy = verdict_driver_policy and resize_power = verdict_driver_resize_power",
                         {"s": row["scenario_id"], "d": row["device_class"]}).to_dicts()
        assert [verdict[c] for c in READING] == [row[c] for c in READING] and not verdict["is_answer"]


def test_the_design_is_the_best_admissible_of_the_answers_method_row(built_warehouse: Path) -> None:
    """Among the verdict's designs at the answer's basis and method row, the siting's design is admissible (where any
    is) and has the highest R with communication: no other admissible design emits less."""
    for row in siting_readings(built_warehouse).filter(pl.col("accounting_frame") != PAPER_FRAME).iter_rows(named=True):
        designs = read(built_warehouse, "select edge_design, design_admissible, reduction_factor_with_comm from marts.verdict "
                                        "where scenario_id = $s and device_class = $d and basis = $b and network_method = $m "
                                        "and embodied_policy = $p and resize_power = $r",
                       {"s": row["scenario_id"], "d": row["device_class"], "b": row["basis"], "m": row["network_method"],
                        "p": row["embodied_policy"], "r": row["resize_power"]})
        assert designs.height == 4  # pipeline and the three DiLoCo designs
        chosen = designs.filter(pl.col("edge_design") == row["edge_design"]).to_dicts()[0]
        admissible = designs.filter(pl.col("design_admissible"))
        assert chosen["design_admissible"] == (admissible.height > 0)
        assert chosen["reduction_factor_with_comm"] == admissible.get_column("reduction_factor_with_comm").max()


def model_row(path: Path, scenario: str, device: str, reading: dict) -> dict:
    """core.model_evaluation's row of the scenario itself (variant 'base') at the reading's basis, design and method row."""
    [row] = read(path, "select * from core.model_evaluation where scenario_id = $s and variant_id = 'base' and device_class = $d "
                       "and basis = $b and pattern = $pattern and network_method = $m and embodied_policy = $p and resize_power = $r",
                 {"s": scenario, "d": device, "b": reading["basis"], "pattern": reading["edge_design"], "m": reading["network_method"],
                  "p": reading["embodied_policy"], "r": reading["resize_power"]}).to_dicts()
    return row


def r_by_hand(row: dict, cloud_ci: float, edge_ci: float, own_cloud_ci: float, own_edge_ci: float) -> float:
    """R at other intensities from the model's terms at the scenario's own: the cloud's operational carbon scales with
    its grid, its embodied does not; the edge's operational and communication carbon scale with the edge's grid, its
    embodied does not."""
    embodied, operational = row["cloud_embodied_per_gpu_kgco2e"], row["cloud_operational_per_gpu_kgco2e"]
    cloud = row["cloud_total_kgco2e"] * (embodied + operational * cloud_ci / own_cloud_ci) / (embodied + operational)
    edge = (row["edge_operational_kgco2e"] + row["comm_kgco2e"]) * edge_ci / own_edge_ci + row["edge_embodied_kgco2e"]
    return cloud / edge


@pytest.mark.parametrize(("scenario", "cloud", "edge"), [
    ("paper_text", "PL", "FR"), ("paper_text", "SE", "mix"),
    ("realistic_attributional", "PL", "FR"), ("realistic_attributional", "FR", "IN"), ("realistic_attributional", "US", "mix"),
    ("realistic_consequential", "US", "mix"),
])
def test_r_at_a_pair_of_zones_by_hand_from_the_models_terms(built_warehouse: Path, scenario: str, cloud: str, edge: str) -> None:
    [(own_cloud_ci, own_edge_ci)] = read(built_warehouse, "select cloud_grid_gco2e_per_kwh, edge_grid_gco2e_per_kwh from core.scenarios "
                                                          "where scenario_id = $s", {"s": scenario}).rows()
    for device in ("laptop", "phone"):
        [pair] = read(built_warehouse, "select * from marts.siting where scenario_id = $s and cloud_zone = $c and edge_zone = $e "
                                       "and device_class = $d", {"s": scenario, "c": cloud, "e": edge, "d": device}).to_dicts()
        with_comm = model_row(built_warehouse, scenario, device, pair)
        # compute only depends on the allocation policy alone: the model's rows of the scenario at that policy
        computes = read(built_warehouse, "select * from core.model_evaluation where scenario_id = $s and variant_id = 'base' "
                                         "and device_class = $d and basis = $b and pattern = $pattern and embodied_policy = $p "
                                         "order by network_method, resize_power",
                        {"s": scenario, "d": device, "b": pair["basis"], "pattern": COMPUTE_ONLY, "p": pair["embodied_policy"]})
        assert computes.height >= 1 and computes.get_column("reduction_factor").n_unique() == 1
        compute = computes.to_dicts()[0]
        for row in (with_comm, compute):  # the model's edge total is the three terms the hand scales
            total = row["edge_operational_kgco2e"] + row["edge_embodied_kgco2e"] + row["comm_kgco2e"]
            assert row["edge_added_kgco2e"] == pytest.approx(total, rel=1e-12)
        # at the scenario's own intensities the model's R is the verdict's answer
        [(verdict_r, verdict_compute)] = read(
            built_warehouse, "select reduction_factor_with_comm, reduction_factor from marts.verdict where scenario_id = $s "
                             "and device_class = $d and basis = $b and edge_design = $g and network_method = $m "
                             "and embodied_policy = $p and resize_power = $r",
            {"s": scenario, "d": device, "b": pair["basis"], "g": pair["edge_design"], "m": pair["network_method"],
             "p": pair["embodied_policy"], "r": pair["resize_power"]}).rows()
        assert with_comm["reduction_factor"] == pytest.approx(verdict_r, rel=1e-12)
        assert compute["reduction_factor"] == pytest.approx(verdict_compute, rel=1e-12)
        # at the pair's intensities: the siting row
        ci = (pair["cloud_gco2e_per_kwh"], pair["edge_gco2e_per_kwh"], own_cloud_ci, own_edge_ci)
        assert pair["reduction_factor_with_comm"] == pytest.approx(r_by_hand(with_comm, *ci), rel=1e-9)
        assert pair["reduction_factor"] == pytest.approx(r_by_hand(compute, *ci), rel=1e-9)
        assert pair["link_feasible_with_comm"] == with_comm["link_feasible"]
