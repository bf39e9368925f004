-- asset: group=marts
-- marts.fleet_equivalence (paper Fig. 5). Grain: scenario x edge device class x basis; a mixed
-- fleet adds its whole ('fleet') beside its classes.
-- Shapes the model's output (sql/core/model_evaluation.sql over core.scenarios, every basis: the rows
-- of core.model_evaluation under the frame's headline method row) into one row per basis: devices per cloud GPU, edge added
-- carbon, communication under the scenario's named pattern (comm_pattern: the paper's radio
-- window in its own scenarios) and the reduction factor with and without it.
-- marts.communication holds every pattern. The memory-capacity floor is a column, not a basis.
with evaluated as (
    -- the model's rows (core.model_evaluation) this mart reads: each scenario as it stands (family 'base'), every
    -- basis and pattern, the frame's headline method row
    select * from core.model_evaluation where family = 'base' and is_headline_method
),

s as (
    select
        scenario_id,
        -- the scenario's 'with communication' pattern (core.patterns)
        comm_pattern,
        -- the claim it tests (core.claim: a cloud/edge ratio claim's bounds)
        claim_id,
        edge_grid_gco2e_per_kwh
    from core.scenarios
),

compute_only as (
    -- R without communication: the rows of the pattern that moves no bytes (core.patterns)
    select evaluated.*
    from evaluated
    inner join core.patterns on evaluated.pattern = core.patterns.pattern and not core.patterns.moves_bytes
),

with_comm as (
    select evaluated.scenario_id, evaluated.device_class, evaluated.basis, evaluated.pattern as comm_pattern,
           evaluated.comm_gb, evaluated.comm_kgco2e, evaluated.link_time_share,
           evaluated.reduction_factor as reduction_factor_with_comm
    from evaluated
    inner join s on evaluated.scenario_id = s.scenario_id and evaluated.pattern = s.comm_pattern
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
    compute_only.devices / compute_only.cloud_gpu_count as devices_per_gpu,
    compute_only.devices,
    compute_only.cloud_gpu_count,
    compute_only.fleet_share,
    compute_only.job_years,
    compute_only.devices_from,
    compute_only.devices_memory_floor,
    -- the model's edge added carbon (compute only: no communication term)
    compute_only.edge_added_kgco2e,
    compute_only.edge_operational_kgco2e,
    compute_only.edge_embodied_kgco2e,
    with_comm.comm_pattern,
    with_comm.comm_gb,
    with_comm.comm_kgco2e,
    with_comm.link_time_share,
    compute_only.cloud_total_kgco2e,
    compute_only.reduction_factor,
    with_comm.reduction_factor_with_comm,
    -- the training power at which R would fall to the low end of the scenario's claim (core.claim:
    -- the paper's phone end, 4), the embodied part held fixed; null where even zero power leaves R
    -- below it, or the claim is not a ratio R (marts.break_even solves exactly)
    case when compute_only.device_class <> 'fleet' and compute_only.cloud_total_kgco2e / claim.claim_low > compute_only.edge_embodied_kgco2e then
        edge_power_w_for_kgco2e(compute_only.cloud_total_kgco2e / claim.claim_low - compute_only.edge_embodied_kgco2e, compute_only.devices,
                                compute_only.online_fraction, compute_only.hours_per_day, compute_only.job_years,
                                coalesce(d.class_grid_gco2e_per_kwh, s.edge_grid_gco2e_per_kwh))
            / compute_only.wall_factor
    end as train_power_w_for_r4
from compute_only
inner join with_comm using (scenario_id, device_class, basis)
inner join s using (scenario_id)
-- the class's own grid where it has one (core.scenario_devices; the fleet row has none)
left join core.scenario_devices as d using (scenario_id, device_class)
left join core.claim as claim on claim.claim_id = s.claim_id
order by compute_only.scenario_id, compute_only.device_class, compute_only.basis
