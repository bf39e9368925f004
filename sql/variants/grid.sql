-- Family 'grid': every scenario at every point of the device multiplier x edge training hours grid, its axes stated
-- here once (device_multiplier 0.25 to 3 in steps of 0.25, the Sensitivity page's slider steps; edge_hours_per_day
-- 1 to 24), each evaluated on the scenario's headline basis and the patterns every scenario is evaluated on at the
-- frame's headline method row: marts.sensitivity_grid's rows (the page reads its axes from that mart).
with points as (
    select (multiplier.i * 0.25)::double as device_multiplier, hours.h::double as edge_hours_per_day
    from range(1, 13) as multiplier(i)
    cross join range(1, 25) as hours(h)
)

select
    scenarios.scenario_id,
    'm=' || points.device_multiplier || '|h=' || points.edge_hours_per_day as variant_id,
    'grid' as family,
    (select list(pattern) from core.patterns where every_scenario) as patterns,
    'headline' as basis_filter,
    'headline' as method_filter,
    [{'parameter': 'device_multiplier', 'value': points.device_multiplier, 'value_text': null::varchar},
     {'parameter': 'edge_hours_per_day', 'value': points.edge_hours_per_day, 'value_text': null::varchar}] as overrides
from core.scenarios as scenarios
cross join points
order by scenarios.scenario_id, points.device_multiplier, points.edge_hours_per_day
