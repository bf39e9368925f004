"""marts.fleet_sizing, given rows -> expected rows: the asset's body over the typed paper_text
scenario (tests/marts/model_rows.py) and the OPT sizes of staging.model_configs, no build."""

from __future__ import annotations

import math

import polars as pl

from tests.marts.model_rows import MODEL_CONFIGS, declared_mart, scenario_connection

#: core.bases in order; measured_rates has no row: paper_text gives no measured training rate
#: (<class>_measured_share unset), so that basis has no device capacity.
BASES = ["peak_flops", "peak_fp16", "memory_bandwidth", "roofline", "availability", "binding", "measured_throughput"]


def mart(overrides: dict[str, float | str | None] | None = None) -> pl.DataFrame:
    con = scenario_connection(overrides)
    return declared_mart("marts.fleet_sizing", con)


def devices(rows: pl.DataFrame, device_class: str, model_id: str) -> dict[str, float]:
    picked = rows.filter((pl.col("device_class") == device_class) & (pl.col("model_id") == model_id))
    return dict(zip(picked.get_column("basis").to_list(), picked.get_column("devices").to_list(), strict=True))


def test_one_row_per_class_model_size_and_basis_in_the_bases_order() -> None:
    rows = mart()
    assert rows.height == 2 * len(MODEL_CONFIGS) * len(BASES)  # laptop and phone x 8 OPT sizes x 7 bases
    for (device_class, model_id), group in rows.group_by(["device_class", "model_id"], maintain_order=True):
        assert group.get_column("basis").to_list() == BASES, (device_class, model_id)
    assert rows.get_column("model_id").unique(maintain_order=True).to_list()[:2] == ["OPT-125M", "OPT-350M"]


def test_capacity_counts_by_hand() -> None:
    rows = mart()
    # devices = ceil(cloud capacity x cloud hours / (device capacity x device hours)), availability 1
    peak = math.ceil(67 * 24 / (6.8 * 8))  # H100 FP32 67 TFLOPS 24 h/day; laptop 6.8 TFLOPS 8 h/day: 29.56 -> 30
    assert peak == 30
    expected = {
        "peak_flops": peak,  # the formula's count, not the paper's stated 15
        "peak_fp16": math.ceil(989.5 * 24 / (6.8 * 8)),  # 436.5 -> 437
        "memory_bandwidth": math.ceil(3350 * 24 / (200 * 8)),  # GB/s: 50.25 -> 51
        "roofline": peak,  # min(F, 1000 FLOP/B x B) is the FP32 peak on both sides
        "availability": peak,  # online fraction 1
        "binding": peak,  # the memory floor (3) does not bind
        # measured jobs/h: 3600 x 4.95 / 250 s = 71.28 vs 3600 / 480 s = 7.5 -> 28.5, floored at the
        # devices that deliver the GPU's 67 TFLOPS at their peak: 29.56 -> 30
        "measured_throughput": peak,
    }
    for model_id, *_ in MODEL_CONFIGS:  # the job is the GPU's work, whatever the model's size
        assert devices(rows, "laptop", model_id) == expected
    phone = devices(rows, "phone", "OPT-1.3B")
    assert phone["peak_flops"] == math.ceil(67 * 24 / (1.38 * 8)) == 146  # 145.65 -> 146
    assert phone["memory_bandwidth"] == math.ceil(3350 * 24 / (51.2 * 8)) == 197  # 196.3 -> 197
    # 3600 x 4.95 / 250 = 71.28 jobs/h vs 3600 / 3510 s -> 208.49 -> 209 (above the peak floor, 146)
    assert phone["measured_throughput"] == math.ceil(71.28 * 24 / (3600 / 3510 * 8)) == 209


def test_memory_capacity_count_by_hand() -> None:
    rows = mart()

    def floor(params: float, memory_gb: float, usable: float) -> int:
        """Devices holding the training state: 16 B per parameter over usable memory, at least 1."""
        return max(math.ceil(params * 16 / (memory_gb * 1e9 * usable)), 1)

    for model_id, params, *_ in MODEL_CONFIGS:
        gpus = floor(params, 80, 0.9)  # H100 80 GB at 0.9 usable
        picked = rows.filter(pl.col("model_id") == model_id)
        for device_class, memory_gb in (("laptop", 16), ("phone", 8)):  # 0.5 usable on both
            own = picked.filter(pl.col("device_class") == device_class)
            assert set(own.get_column("devices_memory_capacity")) == {math.ceil(floor(params, memory_gb, 0.5) / gpus)}
    # OPT-66B: 1.056e12 B / 8e9 B = 132 laptops per 15 GPUs (1.056e12 / 7.2e10 = 14.7) -> 8.8 -> 9
    sized = rows.filter((pl.col("model_id") == "OPT-66B") & (pl.col("basis") == "binding"))
    assert sorted(sized.select("device_class", "devices_memory_capacity", "binding_basis").rows()) == [
        ("laptop", 9.0, "roofline"), ("phone", 18.0, "roofline")]  # 264 phones / 15 = 17.6 -> 18


def test_the_memory_floor_binds_on_a_small_device() -> None:
    rows = mart({"laptop_memory_gb": 1.0})
    laptop = rows.filter(pl.col("device_class") == "laptop")
    big = laptop.filter(pl.col("model_id") == "OPT-66B")
    # 66e9 x 16 B / (1 GB x 0.5) = 2112 laptops per 15 GPUs: 140.8 -> 141, above the roofline's 30
    assert math.ceil(math.ceil(66e9 * 16 / 0.5e9) / 15) == 141
    assert devices(big, "laptop", "OPT-66B") == {**dict.fromkeys(BASES, 30.0), "binding": 141.0, "measured_throughput": 141.0,
                                                 "peak_fp16": 437.0, "memory_bandwidth": 51.0}
    assert set(big.get_column("binding_basis")) == {"memory_capacity"}
    # OPT-125M: 2e9 B / 0.5e9 B = 4 laptops per GPU: below 30, the roofline binds
    small = laptop.filter(pl.col("model_id") == "OPT-125M")
    assert set(small.get_column("devices_memory_capacity")) == {4.0}
    assert set(small.get_column("binding_basis")) == {"roofline"}
