-- Scenarios with a code out of its range or terms that do not follow their accounting frame
-- (core.scenarios). Each row: the scenario, its frame and what breaks it. as_published (0)
-- keeps the paper's own mixed frame.
--   attributional (1): embodied per use hour (policy 2); network by average kWh/GB, no
--     marginal power model.
--   consequential (2): battery wear (policy 1); network by its marginal power, no average
--     kWh/GB.
select scenario_id, accounting_frame, problem
from (
    select
        scenario_id,
        cast(accounting_frame as integer) as accounting_frame,
        unnest(list_filter([
            case when accounting_frame not in (0, 1, 2)
                then 'accounting_frame must be 0 (as_published), 1 (attributional) or 2 (consequential)' end,
            case when edge_embodied_policy not in (0, 1, 2)
                then 'edge_embodied_policy must be 0 (none), 1 (battery wear) or 2 (per use hour)' end,
            case when headline_basis not in (0, 1)
                then 'headline_basis must be 0 (binding) or 1 (measured_throughput)' end,
            case when comm_pattern not in (1, 2, 3, 4, 5)
                then 'comm_pattern must be 1 (radio_window), 2 (idealized), 3 (parameter_server), 4 (ring_allreduce) or 5 (pipeline)' end,
            case when grid_shared not in (0, 1) then 'grid_shared must be 0 or 1' end,
            case when cloud_gpu_variant not in (0, 1) then 'cloud_gpu_variant must be 0 (main) or 1 (alternative)' end,
            case when cast(accounting_frame as integer) = 1 and cast(edge_embodied_policy as integer) != 2
                then 'attributional frame charges edge embodied carbon per use hour (edge_embodied_policy = 2)' end,
            case when cast(accounting_frame as integer) = 2 and cast(edge_embodied_policy as integer) != 1
                then 'consequential frame charges battery wear (edge_embodied_policy = 1)' end,
            case when cast(accounting_frame as integer) = 2 and network_marginal_w_per_mbps + router_marginal_w_per_mbps <= 0
                then 'consequential frame needs a marginal network power (network_ and router_marginal_w_per_mbps)' end,
            case when cast(accounting_frame as integer) = 1 and network_kwh_per_gb <= 0
                then 'attributional frame needs an average network intensity (network_kwh_per_gb)' end,
            case when workload_kind not in (0, 1, 2)
                then 'workload_kind must be 0 (horizon), 1 (gpu_hours) or 2 (params_tokens)' end,
            case when cloud_gpu_count < 1 then 'cloud_gpu_count must be at least 1' end,
            case when cast(workload_kind as integer) = 1 and workload_gpu_hours <= 0
                then 'workload_kind 1 needs workload_gpu_hours > 0' end,
            case when cast(workload_kind as integer) = 2 and (workload_tokens <= 0 or workload_mfu <= 0 or workload_mfu > 1)
                then 'workload_kind 2 needs workload_tokens > 0 and 0 < workload_mfu <= 1' end
        ], lambda x: x is not null)) as problem
    from core.scenarios
)
order by scenario_id
