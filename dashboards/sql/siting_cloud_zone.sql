-- For each scenario's own cloud zone (marts.siting_summary.scenario_share = 1), with
-- communication: the edge zones where R >= 1 and the cleanest edge zone where it is not, and R
-- against the scenario's own edge mix with the cloud intensity below which the mix loses.
with named as (
    select scenario_id, device_class, zone as cloud_zone, zone_gco2e_per_kwh as cloud_ci, intensity_basis
    from marts.siting_summary
    where side = 'cloud' and scenario_share = 1 and r_kind = 'with_comm'
)

select
    n.scenario_id,
    s.accounting_frame,
    n.device_class,
    n.cloud_zone,
    n.cloud_ci,
    n.intensity_basis,
    count(*) filter (where s.edge_mix is null) as edge_zones,
    count(*) filter (where s.edge_mix is null and s.reduction_factor_with_comm >= 1) as edge_zones_r_ge_1,
    count(*) filter (where s.edge_mix is null and s.reduction_factor_with_comm >= $claim_low) as edge_zones_r_ge_4,
    max(s.edge_gco2e_per_kwh) filter (where s.edge_mix is null and s.reduction_factor_with_comm >= 1) as dirtiest_winning_edge_ci,
    min(s.edge_gco2e_per_kwh) filter (where s.edge_mix is null and s.reduction_factor_with_comm < 1) as cleanest_losing_edge_ci,
    string_agg(s.edge_zone, ', ' order by s.edge_gco2e_per_kwh)
        filter (where s.edge_mix is null and s.reduction_factor_with_comm >= 1) as winning_edge_zones,
    min(s.reduction_factor_with_comm) filter (where s.edge_mix is null) as r_min,
    max(s.reduction_factor_with_comm) filter (where s.edge_mix is null) as r_max,
    any_value(s.edge_mix) filter (where s.edge_mix is not null) as edge_mix,
    any_value(s.edge_gco2e_per_kwh) filter (where s.edge_mix is not null) as mix_ci,
    any_value(s.reduction_factor_with_comm) filter (where s.edge_mix is not null) as r_mix,
    any_value(m.cloud_gco2e_per_kwh_for_r1) as mix_cloud_ci_for_r1
from named as n
inner join marts.siting as s on s.scenario_id = n.scenario_id and s.device_class = n.device_class and s.cloud_zone = n.cloud_zone
left join marts.siting_summary as m
    on m.scenario_id = n.scenario_id and m.device_class = n.device_class and m.r_kind = 'with_comm' and m.side = 'edge'
    and m.edge_mix is not null
group by all
order by n.scenario_id, n.device_class
