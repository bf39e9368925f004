-- marts.siting after a refresh: the rows just computed (the temporary table `siting_fresh`), each
-- keeping the run that computed it last (computed_run_id) where the published row is the same
-- (its basis, edge design, method row, R, both intensities and when their data were fetched); a row that
-- changed, or is new, takes $run_id.
-- So a refresh of one zone's series re-stamps the rows that read the zone and no other.
select
    fresh.*,
    coalesce(old.computed_run_id, $run_id) as computed_run_id
from siting_fresh as fresh
left join marts.siting as old
    on old.scenario_id = fresh.scenario_id and old.cloud_zone = fresh.cloud_zone and old.edge_zone = fresh.edge_zone
    and old.device_class = fresh.device_class and old.basis = fresh.basis and old.edge_design = fresh.edge_design
    and old.network_method = fresh.network_method
    and old.embodied_policy = fresh.embodied_policy and old.resize_power = fresh.resize_power
    and old.reduction_factor is not distinct from fresh.reduction_factor
    and old.reduction_factor_with_comm is not distinct from fresh.reduction_factor_with_comm
    and old.cloud_gco2e_per_kwh = fresh.cloud_gco2e_per_kwh and old.edge_gco2e_per_kwh = fresh.edge_gco2e_per_kwh
    and old.cloud_fetched_at = fresh.cloud_fetched_at and old.edge_fetched_at = fresh.edge_fetched_at
