-- marts.fleet_equivalence (paper Fig. 5). Grain: scenario x edge device class x basis.
-- Shapes the model's output (sql/model/evaluate.sql over core.scenarios, every basis; read
-- here as the relation `evaluated`) into one row per basis: devices per cloud GPU, edge added
-- carbon, the paper's radio communication ('radio_window' pattern) and the reduction factor
-- with and without it. marts.communication holds the other communication patterns.
with compute_only as (
    select * from evaluated where pattern = 'none'
),

radio as (
    select scenario_id, device_class, basis, comm_kgco2e, reduction_factor as reduction_factor_with_comm
    from evaluated
    where pattern = 'radio_window'
),

s as (
    select * from core.scenarios
)

select
    compute_only.scenario_id,
    compute_only.device_class,
    compute_only.basis,
    compute_only.is_headline,
    compute_only.cloud_gpu_capacity,
    compute_only.device_capacity,
    compute_only.capacity_unit,
    compute_only.online_fraction,
    compute_only.devices_exact,
    compute_only.devices_formula,
    compute_only.devices as devices_per_gpu,
    compute_only.devices_from,
    compute_only.edge_operational_kgco2e + compute_only.edge_embodied_kgco2e as edge_added_kgco2e,
    compute_only.edge_operational_kgco2e,
    compute_only.edge_embodied_kgco2e,
    radio.comm_kgco2e,
    compute_only.cloud_total_kgco2e,
    compute_only.reduction_factor,
    radio.reduction_factor_with_comm,
    -- the training power at which R would fall to 4 (the paper's phone end), all else fixed
    (compute_only.cloud_total_kgco2e / 4 - compute_only.edge_embodied_kgco2e) * 1e6
        / (compute_only.devices * compute_only.online_fraction * s.edge_hours_per_day * 365 * s.horizon_years
           * s.edge_grid_gco2e_per_kwh) as train_power_w_for_r4
from compute_only
inner join radio using (scenario_id, device_class, basis)
inner join s using (scenario_id)
order by compute_only.scenario_id, compute_only.device_class, compute_only.basis
