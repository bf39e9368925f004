-- Scaling page (paper Fig. 3): energy per model size, compute and communication as separate
-- series. Zero communication (the cloud GPU) is left out because it has no place on a log axis.
with long as (
    select scenario_id, device_class, model_id, params, 'compute' as component, compute_kwh as kwh
    from marts.scaling_energy
    union all
    select scenario_id, device_class, model_id, params, 'communication', comm_kwh
    from marts.scaling_energy
    union all
    select scenario_id, device_class, model_id, params, 'total', total_kwh
    from marts.scaling_energy
)

select scenario_id, device_class, model_id, params, params / 1e9 as params_billion, component, kwh
from long
where kwh > 0
order by scenario_id, device_class, component, params
