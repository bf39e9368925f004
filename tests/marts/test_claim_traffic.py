"""marts.claim_traffic, given rows -> expected rows, and the two patterns the claims need worked by hand:
a federated round's bytes (federated_round) and a DiLoCo outer step's (diloco_allreduce), each from its row
of sources/curated/patterns.csv through the model's comm_bytes."""

from __future__ import annotations

import duckdb
import pytest

from pipelines.warehouse.tables import install_macros
from schemas.vocabulary import PATTERN_ROWS, PATTERNS
from tests.marts.given_rows import run_mart


def _bytes(pattern: str, devices: float, params: float, bytes_per_param: float, tokens: float, tokens_per_step: float,
           local_steps: float, compression: float) -> float:
    """The model's comm_bytes (sql/model/macros.sql) over one pattern's row."""
    row = PATTERN_ROWS[pattern]
    con = duckdb.connect()
    install_macros(con)
    return con.execute("select comm_bytes($a, $b, $c, $d, $n, $p, $bpp, $tokens, $tps, $h, 0, 0, $compression, 1)",
                       {"a": row.sync_n, "b": row.sync_n_minus_1, "c": row.activations, "d": row.stage_allreduce, "n": devices,
                        "p": params, "bpp": bytes_per_param, "tokens": tokens, "tps": tokens_per_step, "h": local_steps,
                        "compression": compression}).fetchall()[0][0]


def test_a_federated_round_moves_the_model_down_and_the_update_up_per_client() -> None:
    """1,000 clients, a 20M-parameter model in float32, one round (tokens = clients x tokens per client step):
    each client downloads 80 MB and uploads 80 MB, 2 x 1,000 x 80 MB = 160 GB per round."""
    clients, params = 1_000, 20e6
    assert _bytes("federated_round", clients, params, 4, tokens=clients * 512, tokens_per_step=512, local_steps=1,
                  compression=1) == pytest.approx(2 * clients * params * 4)
    row = PATTERN_ROWS["federated_round"]
    assert (row.home_ends, row.server_ends, row.radio_per_byte, row.every_scenario) == (1, 1, 1, False)


def test_a_diloco_outer_step_ring_all_reduces_the_compressed_pseudo_gradients() -> None:
    """14 nodes, INTELLECT-1's 10,211,381,248 parameters, float32 quantised to uint8, 100 inner steps of 1,048,576
    tokens: one outer step (tokens = 14 x 1,048,576 x 100) moves 2 x 13 x 10,211,381,248 x 1 B = 265.5 GB
    (2 x 13 / 14 = 1.857 payloads per node), between data centres (no home line, no device radio)."""
    nodes, params = 14, 10_211_381_248
    one_step = _bytes("diloco_allreduce", nodes, params, 4, tokens=nodes * 1_048_576 * 100, tokens_per_step=1_048_576,
                      local_steps=100, compression=4)
    assert one_step == pytest.approx(2 * 13 * params)
    assert one_step / nodes == pytest.approx(2 * 13 / 14 * params)
    row = PATTERN_ROWS["diloco_allreduce"]
    assert (row.home_ends, row.server_ends, row.radio_per_byte, row.radio_per_window, row.every_scenario) == (0, 2, 0, 0, False)


def test_the_claims_patterns_are_evaluated_only_for_a_scenario_that_names_them() -> None:
    """Every scenario is evaluated on the Xue et al. patterns; the claims' patterns only where a scenario names them."""
    assert "federated_round" not in PATTERNS and "diloco_allreduce" not in PATTERNS
    # beside the edge training designs, which a scenario whose frame resizes its fleet is read on
    assert set(PATTERN_ROWS) - set(PATTERNS) == {"federated_round", "diloco_allreduce", "diloco_server", "diloco_ring", "diloco_pipeline"}


def _parameters(case_id: str, **values: float | str | tuple[float, float, float]) -> list[dict]:
    """staging.claim_parameters rows: a text is a named value, a triple (value, low, high) a sourced range."""
    rows = []
    for parameter, value in values.items():
        row = {"case_id": case_id, "parameter": parameter, "value": None, "value_text": None, "low": None, "high": None,
               "factor_id": None}
        if isinstance(value, str):
            row["value_text"] = value
        elif isinstance(value, tuple):
            row["value"], row["low"], row["high"] = value
        else:
            row["value"] = value
        rows.append(row)
    return rows


NETWORK = [{"factor_id": "f", "value": 0.01, "low": 0.005, "high": None}]


def _values(parameters: list[dict]) -> list[dict]:
    """core.claim_values over the rows (sql/core/claim_values.sql)."""
    return run_mart("core.claim_values", {"staging.claim_parameters": parameters, "staging.network_energy": NETWORK})


def test_a_case_s_values_at_each_end_of_their_ranges_and_from_their_factor_rows() -> None:
    """A range gives its ends, a value without one is the same at each end, a factor row gives its own value and range."""
    parameters = _parameters("c", nodes=(3.0, 2.0, 4.0), params=1e9, comm_pattern="diloco_allreduce")
    parameters.append({"case_id": "c", "parameter": "network_kwh_per_gb", "value": None, "value_text": None, "low": None,
                       "high": None, "factor_id": "f"})
    got = {(r["parameter"], r["range_end"]): (r["value"], r["value_text"]) for r in _values(parameters)}
    assert [got[("nodes", e)][0] for e in ("low", "central", "high")] == [2.0, 3.0, 4.0]
    assert {got[("params", e)][0] for e in ("low", "central", "high")} == {1e9}
    assert [got[("network_kwh_per_gb", e)][0] for e in ("low", "central", "high")] == [0.005, 0.01, 0.01]
    assert got[("comm_pattern", "central")] == (None, "diloco_allreduce")


def test_a_case_s_traffic_and_its_network_energy_under_each_wide_area_method() -> None:
    """A DiLoCo case of 3 nodes (2 to 3), 1e9 parameters, float32 to uint8, 10 inner steps of 1,000 tokens, 1.2e6
    tokens: 1.2e6 / (3 x 1,000 x 10) = 40 outer steps of 2 x 2 x 1e9 x 1 B = 4 GB, 160 GB in all (0.16 TB).
    Volume at 0.01 kWh/GB at each of 2 data-centre ends: 3.2 kWh; marginal at 0.05 W/(Mbit/s) once: 160 GB x 8,000
    Mbit x 0.05 W / 3.6e6 = 0.01778 kWh. The low end (2 nodes): 60 steps of 2 x 1 x 1e9 B = 120 GB."""
    parameters = _parameters("c", comm_pattern="diloco_allreduce", nodes=(3.0, 2.0, 3.0), params=1e9, bytes_per_param=4.0,
                             comm_compression=4.0, local_steps_per_sync=10.0, tokens=1.2e6, tokens_per_device_step=1_000.0,
                             network_marginal_w_per_mbps=0.05)
    parameters.append({"case_id": "c", "parameter": "network_kwh_per_gb", "value": None, "value_text": None, "low": None,
                       "high": None, "factor_id": "f"})
    # a federated session case names no nodes or tokens: it moves no wide-area traffic here
    parameters += _parameters("session", comm_pattern="federated_round", params=1e7)
    rows = run_mart("marts.claim_traffic", {"core.claim_values": _values(parameters)},
                    method_tables=("core.patterns", "core.network_methods"))
    assert {r["scenario_id"] for r in rows} == {"c"}
    got = {(r["network_method"], r["range_end"]): r for r in rows}
    assert sorted({m for m, _ in got}) == ["marginal", "volume"]
    assert got[("volume", "central")]["syncs"] == pytest.approx(40)
    assert got[("volume", "central")]["wan_tb"] == pytest.approx(0.16)
    assert got[("volume", "central")]["network_kwh"] == pytest.approx(3.2)
    assert got[("marginal", "central")]["network_kwh"] == pytest.approx(160 * 8000 * 0.05 / 3.6e6)
    assert got[("volume", "low")]["wan_tb"] == pytest.approx(0.12)
    assert got[("volume", "high")]["wan_tb"] == pytest.approx(0.16)
