-- The siting summary docs/findings.md quotes (edge-carbon docs), per siting scenario and device
-- class, with communication, on the basis and edge design marts.siting reads (marts.verdict's answer
-- for the scenario and class): R over every pair of zones (marts.siting, the edge mix left out),
-- the share of pairs where the edge wins (R >= 1) and where the claim holds (R >= $claim_low);
-- at the scenario's own cloud zone (marts.siting_summary.scenario_share = 1) the edge zones where
-- the edge wins and the dirtiest grid among them; and the scenario's own pair, its cloud zone
-- against its edge mix: R there and the cloud intensity below which the mix loses (R < 1).
with named as (
    select scenario_id, device_class, zone as cloud_zone, zone_gco2e_per_kwh as cloud_ci
    from marts.siting_summary
    where side = 'cloud' and scenario_share = 1 and r_kind = 'with_comm'
),

pairs as (
    select scenario_id, accounting_frame, device_class,
        string_agg(distinct basis, ', ' order by basis) as basis,
        string_agg(distinct edge_design, ', ' order by edge_design) as edge_design,
        count(distinct cloud_zone) as cloud_zones, count(distinct edge_zone) as edge_zones,
        min(reduction_factor_with_comm) as r_min, max(reduction_factor_with_comm) as r_max,
        avg(case when reduction_factor_with_comm >= 1 then 1.0 else 0.0 end order by cloud_zone, edge_zone) as share_r_ge_1,
        avg(case when reduction_factor_with_comm >= $claim_low then 1.0 else 0.0 end order by cloud_zone, edge_zone) as share_r_ge_4
    from marts.siting
    where edge_mix is null
    group by scenario_id, accounting_frame, device_class
),

at_named as (
    select n.scenario_id, n.device_class, n.cloud_zone, n.cloud_ci,
        count(*) filter (where s.edge_mix is null and s.reduction_factor_with_comm >= 1) as wins,
        max(s.edge_gco2e_per_kwh) filter (where s.edge_mix is null and s.reduction_factor_with_comm >= 1) as dirtiest_winning_edge_ci,
        string_agg(s.edge_zone, ', ' order by s.reduction_factor_with_comm desc, s.edge_zone)
            filter (where s.edge_mix is null and s.reduction_factor_with_comm >= 1) as winning_edge_zones,
        any_value(s.edge_mix) filter (where s.edge_mix is not null) as edge_mix,
        any_value(s.edge_gco2e_per_kwh) filter (where s.edge_mix is not null) as mix_ci,
        any_value(s.reduction_factor_with_comm) filter (where s.edge_mix is not null) as r_mix
    from named as n
    inner join marts.siting as s on s.scenario_id = n.scenario_id and s.device_class = n.device_class and s.cloud_zone = n.cloud_zone
    group by n.scenario_id, n.device_class, n.cloud_zone, n.cloud_ci
),

mix_lines as (
    select scenario_id, device_class, cloud_gco2e_per_kwh_for_r1 as mix_cloud_ci_for_r1
    from marts.siting_summary
    where side = 'edge' and r_kind = 'with_comm' and edge_mix is not null
)

select p.*, a.cloud_zone, a.cloud_ci, a.wins, a.dirtiest_winning_edge_ci, a.winning_edge_zones, a.edge_mix, a.mix_ci, a.r_mix,
    m.mix_cloud_ci_for_r1
from pairs as p
left join at_named as a using (scenario_id, device_class)
left join mix_lines as m using (scenario_id, device_class)
order by p.scenario_id, p.device_class
