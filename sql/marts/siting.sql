-- marts.siting. Grain: scenario x cloud zone x edge zone x edge device class.
-- R for every pair of zones of core.zone_intensity, from the model's one formula
-- (sql/model/evaluate.sql, the view `model_evaluation` over core.scenarios with each pair's two
-- grid intensities in place of the scenario's: variant_id 'cloud>edge'), on the measured
-- basis, compute only and with the scenario's named communication pattern under its frame's
-- headline network method. Deterministic: no draws. `pairs` is the relation of the pairs
-- (sql/siting/pairs.sql). Each side's signal, scope, data year and age are in core.zone_intensity.
with frames as (
    select
        scenario_id,
        accounting_frame_name(accounting_frame) as accounting_frame,
        comm_pattern_name(comm_pattern) as comm_pattern
    from core.scenarios
),

measured as (
    select *
    from model_evaluation
    where basis = $basis and is_headline_method
)

select
    p.scenario_id,
    f.accounting_frame,
    p.cloud_zone,
    p.edge_zone,
    compute_only.device_class,
    compute_only.basis,
    f.comm_pattern,
    with_comm.network_method,
    compute_only.reduction_factor,
    with_comm.reduction_factor as reduction_factor_with_comm,
    with_comm.link_feasible as link_feasible_with_comm,
    cloud.gco2e_per_kwh as cloud_gco2e_per_kwh,
    edge.gco2e_per_kwh as edge_gco2e_per_kwh,
    cloud.intensity_basis as cloud_intensity_basis,
    edge.intensity_basis as edge_intensity_basis,
    cloud.year,
    cloud.fetched_at as cloud_fetched_at,
    edge.fetched_at as edge_fetched_at
from pairs as p
inner join frames as f on f.scenario_id = p.scenario_id
inner join measured as compute_only
    on compute_only.scenario_id = p.scenario_id and compute_only.variant_id = p.variant_id and compute_only.pattern = 'none'
inner join measured as with_comm
    on with_comm.scenario_id = p.scenario_id and with_comm.variant_id = p.variant_id
    and with_comm.device_class = compute_only.device_class and with_comm.pattern = f.comm_pattern
inner join core.zone_intensity as cloud on cloud.scenario_id = p.scenario_id and cloud.side = 'cloud' and cloud.zone = p.cloud_zone
inner join core.zone_intensity as edge on edge.scenario_id = p.scenario_id and edge.side = 'edge' and edge.zone = p.edge_zone
order by p.scenario_id, p.cloud_zone, p.edge_zone, compute_only.device_class
