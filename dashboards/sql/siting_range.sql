-- The siting range of each scenario's R with communication (marts.siting): over every pair of
-- zones (not the scenario's edge mix), per scenario and device class, with the basis and edge
-- design it is read on (marts.verdict's answer for the scenario and class).
select
    scenario_id,
    device_class,
    string_agg(distinct basis, ', ' order by basis) as basis,
    string_agg(distinct edge_design, ', ' order by edge_design) as edge_design,
    count(distinct cloud_zone) as cloud_zones,
    count(distinct edge_zone) as edge_zones,
    min(reduction_factor_with_comm) as r_min,
    max(reduction_factor_with_comm) as r_max,
    avg(case when reduction_factor_with_comm >= 1 then 1.0 else 0.0 end order by cloud_zone, edge_zone) as share_r_ge_1
from marts.siting
where edge_mix is null
group by scenario_id, device_class
order by scenario_id, device_class
