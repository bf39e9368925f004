-- Fleet page (paper Fig. 5): the edge fleets that match one cloud GPU, per scenario and
-- equivalence basis (headline basis first), with the device counts and the GPU's own total.
-- The memory floor is not a basis (it has no R of its own): devices_memory_floor is carried
-- for the page's separate floor table.
select
    scenario_id,
    basis,
    is_headline,
    basis || (case when is_headline then ' (headline)' else '' end) as basis_label,
    device_class,
    devices_per_gpu,
    devices_from,
    devices_memory_floor,
    edge_added_kgco2e as kgco2e,
    comm_kgco2e,
    cloud_total_kgco2e,
    reduction_factor,
    reduction_factor_with_comm,
    comm_pattern,
    -- the fleet cannot send its traffic over its link
    coalesce(link_time_share > 1, false) as infeasible,
    cast(round(devices_per_gpu) as bigint) || ' ' || device_class || 's (' || devices_from || ')' as count_label
from marts.fleet_equivalence
order by scenario_id, is_headline desc, basis, device_class
