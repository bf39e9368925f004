-- asset: group=reviewers
-- marts.sensitivity_grid: R over the device multiplier x the edge's training hours per day (core.model_evaluation's
-- family 'grid', whose file, sql/variants/grid.sql, states the axes; each scenario's headline basis and headline
-- method row). Grain: scenario x edge device class x pattern x multiplier x hours. The multiplier scales the basis's
-- device count; the hours change the count too (a fleet training fewer hours needs more devices for the GPU's work),
-- so under the paper's formula R hardly moves with hours: the multiplier is what decides it.
select
    model.scenario_id,
    model.device_class,
    model.pattern,
    overrides.device_multiplier,
    overrides.hours_per_day,
    model.devices,
    model.edge_added_kgco2e,
    model.cloud_total_kgco2e,
    model.reduction_factor,
    overrides.device_multiplier = 1 and overrides.hours_per_day = scenarios.edge_hours_per_day as is_scenario_point
from core.model_evaluation as model
inner join (
    select
        scenario_id, variant_id,
        max(value) filter (where parameter = 'device_multiplier') as device_multiplier,
        max(value) filter (where parameter = 'edge_hours_per_day') as hours_per_day
    from core.variant_parameters
    where family = 'grid'
    group by scenario_id, variant_id
) as overrides using (scenario_id, variant_id)
inner join core.scenarios as scenarios on scenarios.scenario_id = model.scenario_id
where model.family = 'grid'
order by model.scenario_id, model.device_class, model.pattern, overrides.device_multiplier, overrides.hours_per_day
