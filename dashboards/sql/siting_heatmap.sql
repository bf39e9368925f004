-- R of every pair of shown zones (dashboards/sql/siting_zones.sql), per scenario and device class,
-- compute only and with communication, rounded to 3 significant digits for the page's weight.
with shown as (
    -- include: siting_zones
)

select
    s.scenario_id || ' (' || s.accounting_frame || ')' as scenario,
    s.device_class,
    s.cloud_zone,
    s.edge_zone,
    round(s.cloud_gco2e_per_kwh, 0) as cloud_ci,
    round(s.edge_gco2e_per_kwh, 0) as edge_ci,
    round(s.reduction_factor, 2 - cast(floor(log10(s.reduction_factor)) as integer)) as r,
    round(s.reduction_factor_with_comm, 2 - cast(floor(log10(s.reduction_factor_with_comm)) as integer)) as r_comm,
    -- the fleet cannot send its traffic over its link
    not coalesce(s.link_feasible_with_comm, true) as infeasible
from marts.siting as s
semi join shown as c on c.scenario_id = s.scenario_id and c.side = 'cloud' and c.zone = s.cloud_zone
semi join shown as e on e.scenario_id = s.scenario_id and e.side = 'edge' and e.zone = s.edge_zone
order by scenario, s.device_class, s.cloud_zone, s.edge_zone
