-- Scenarios whose terms do not follow their accounting frame or workload (core.scenarios).
-- Each row: the scenario, its frame and what breaks it. Each code and value on its own is
-- checked against its parameter's bounds before (schemas/parameter_bounds.py); here, the
-- parameters that must agree. as_published (0) keeps the paper's own mixed frame.
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
            case when cast(accounting_frame as integer) = 1 and cast(edge_embodied_policy as integer) != 2
                then 'attributional frame charges edge embodied carbon per use hour (edge_embodied_policy = 2)' end,
            case when cast(accounting_frame as integer) = 2 and cast(edge_embodied_policy as integer) != 1
                then 'consequential frame charges battery wear (edge_embodied_policy = 1)' end,
            case when cast(accounting_frame as integer) = 2 and network_marginal_w_per_mbps + router_marginal_w_per_mbps <= 0
                then 'consequential frame needs a marginal network power (network_ and router_marginal_w_per_mbps)' end,
            case when cast(accounting_frame as integer) = 1 and network_kwh_per_gb <= 0
                then 'attributional frame needs an average network intensity (network_kwh_per_gb)' end,
            case when cast(workload_kind as integer) = 1 and workload_gpu_hours <= 0
                then 'workload_kind 1 needs workload_gpu_hours > 0' end,
            case when cast(workload_kind as integer) = 2 and (workload_tokens <= 0 or workload_mfu <= 0 or workload_mfu > 1)
                then 'workload_kind 2 needs workload_tokens > 0 and 0 < workload_mfu <= 1' end
        ], lambda x: x is not null)) as problem
    from core.scenarios
)
order by scenario_id
