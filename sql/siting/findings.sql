-- The siting summary docs/findings.md quotes (edge-carbon docs), per siting scenario and device
-- class, with communication: R over every pair of zones (marts.siting), the share of pairs where
-- the edge wins (R >= 1) and where the claim holds (R >= $claim_low), and at the scenario's own
-- cloud zone (marts.siting_summary.scenario_share = 1) the edge zones where the edge wins and the
-- dirtiest grid among them.
with named as (
    select scenario_id, device_class, zone as cloud_zone, zone_gco2e_per_kwh as cloud_ci
    from marts.siting_summary
    where side = 'cloud' and scenario_share = 1 and r_kind = 'with_comm'
),

pairs as (
    select scenario_id, accounting_frame, device_class, count(distinct cloud_zone) as cloud_zones, count(distinct edge_zone) as edge_zones,
        min(reduction_factor_with_comm) as r_min, max(reduction_factor_with_comm) as r_max,
        avg(case when reduction_factor_with_comm >= 1 then 1.0 else 0.0 end order by cloud_zone, edge_zone) as share_r_ge_1,
        avg(case when reduction_factor_with_comm >= $claim_low then 1.0 else 0.0 end order by cloud_zone, edge_zone) as share_r_ge_4
    from marts.siting
    group by scenario_id, accounting_frame, device_class
),

at_named as (
    select n.scenario_id, n.device_class, n.cloud_zone, n.cloud_ci,
        count(*) filter (where s.reduction_factor_with_comm >= 1) as wins,
        max(s.edge_gco2e_per_kwh) filter (where s.reduction_factor_with_comm >= 1) as dirtiest_winning_edge_ci,
        string_agg(s.edge_zone, ', ' order by s.reduction_factor_with_comm desc, s.edge_zone)
            filter (where s.reduction_factor_with_comm >= 1) as winning_edge_zones
    from named as n
    inner join marts.siting as s on s.scenario_id = n.scenario_id and s.device_class = n.device_class and s.cloud_zone = n.cloud_zone
    group by n.scenario_id, n.device_class, n.cloud_zone, n.cloud_ci
)

select p.*, a.cloud_zone, a.cloud_ci, a.wins, a.dirtiest_winning_edge_ci, a.winning_edge_zones
from pairs as p
left join at_named as a using (scenario_id, device_class)
order by p.scenario_id, p.device_class
