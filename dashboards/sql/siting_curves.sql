-- The break-even lines of the edge zones whose intensity comes from an hourly series, and of the
-- scenario's own edge mix: R against the cloud's intensity, from 0 to $max_ci gCO2e/kWh
-- (marts.siting_summary: intercept and slope).
select
    scenario_id || ' (' || accounting_frame || ')' as scenario,
    device_class,
    case r_kind when 'compute_only' then 'compute only' else 'with communication' end as r_kind,
    case when edge_mix is null then zone else 'mix (' || edge_mix || ')' end as edge_zone,
    round(zone_gco2e_per_kwh, 0) as edge_ci,
    ci.x as cloud_ci,
    r_at_zero_cloud_intensity + r_per_cloud_gco2e_per_kwh * ci.x as r,
    cloud_gco2e_per_kwh_for_r1,
    cloud_gco2e_per_kwh_for_r4,
    -- the scenario's fleet of that class cannot send its traffic over its link (marts.siting)
    coalesce(f.infeasible, false) as infeasible
from marts.siting_summary
cross join (select unnest([0.0, $max_ci]) as x) as ci
left join (
    select scenario_id, device_class, not bool_and(link_feasible_with_comm) as infeasible
    from marts.siting
    group by scenario_id, device_class
) as f using (scenario_id, device_class)
where side = 'edge' and (intensity_basis in ('hourly', 'hourly_shaped') or edge_mix is not null) and r_per_cloud_gco2e_per_kwh is not null
order by scenario, device_class, r_kind, edge_zone, cloud_ci
