-- Fleet page (paper Fig. 5): one cloud GPU's lifecycle total against the edge fleets that
-- match it, per scenario and equivalence basis, with the device counts. The memory floor is
-- not a basis (it has no R of its own): marts.fleet_equivalence.devices_memory_floor.
with fleets as (
    select
        scenario_id,
        basis,
        device_class,
        device_class || ' fleet' as side,
        devices_per_gpu,
        devices_from,
        edge_added_kgco2e as kgco2e,
        comm_kgco2e,
        reduction_factor,
        reduction_factor_with_comm,
        comm_pattern,
        cast(devices_per_gpu as integer) || ' ' || device_class || 's (' || devices_from || ')' as count_label
    from marts.fleet_equivalence
),

cloud as (
    select distinct
        scenario_id,
        basis,
        'cloud_gpu' as device_class,
        'cloud GPU' as side,
        1.0 as devices_per_gpu,
        'one GPU' as devices_from,
        cloud_total_kgco2e as kgco2e,
        0.0 as comm_kgco2e,
        1.0 as reduction_factor,
        1.0 as reduction_factor_with_comm,
        'none' as comm_pattern,
        '1 GPU' as count_label
    from marts.fleet_equivalence
)

select *, side || ' [' || basis || ']' as bar_label
from (select * from cloud union all select * from fleets)
order by scenario_id, basis, device_class
