-- Scenarios whose terms do not follow their accounting frame or workload (core.scenarios).
-- Each row: the scenario, its frame and what breaks it. Each name and value on its own is
-- checked against its parameter's bounds before (schemas/parameter_bounds.py); here, the
-- parameters that must agree, by the rules of the scenario's row of core.frames:
--   edge_embodied_policy: the policy the frame requires (null: any; as_published keeps the
--     paper's own mixed frame);
--   requires_network_factors: the factors of the frame's network energy rule must be given:
--     'average', an average network intensity (network_kwh_per_gb); 'marginal', a marginal
--     power model (network_ and router_marginal_w_per_mbps);
--   charges_receiving_radio: a receiving radio's power must be given (wifi_receive_power_w).
-- A workload needs the figures its kind weighs (core.workload_kinds): accelerator-hours
-- (gpu_hours), or tokens and a model FLOPs utilisation (tokens).
select scenario_id, accounting_frame, problem
from (
    select
        s.scenario_id,
        s.accounting_frame,
        unnest(list_filter([
            case when f.accounting_frame is null
                then 'accounting_frame ' || coalesce(s.accounting_frame, 'null') || ' is not a row of core.frames' end,
            case when s.edge_embodied_policy is distinct from f.edge_embodied_policy and f.edge_embodied_policy is not null
                then f.accounting_frame || ' frame charges edge embodied carbon by ' || f.edge_embodied_policy
                     || ' (edge_embodied_policy = ' || f.edge_embodied_policy || ')' end,
            case when f.requires_network_factors and f.network_energy_rule = 'marginal'
                    and s.network_marginal_w_per_mbps + s.router_marginal_w_per_mbps <= 0
                then f.accounting_frame || ' frame needs a marginal network power (network_ and router_marginal_w_per_mbps)' end,
            case when f.requires_network_factors and f.network_energy_rule = 'average' and s.network_kwh_per_gb <= 0
                then f.accounting_frame || ' frame needs an average network intensity (network_kwh_per_gb)' end,
            case when f.charges_receiving_radio and s.wifi_receive_power_w is null
                then f.accounting_frame || ' frame charges the receiving radio (wifi_receive_power_w)' end,
            case when w.gpu_hours > 0 and s.workload_gpu_hours <= 0
                then 'workload_kind ' || w.workload_kind || ' needs workload_gpu_hours > 0' end,
            case when w.tokens > 0 and (s.workload_tokens <= 0 or s.workload_mfu <= 0 or s.workload_mfu > 1)
                then 'workload_kind ' || w.workload_kind || ' needs workload_tokens > 0 and 0 < workload_mfu <= 1' end
        ], lambda x: x is not null)) as problem
    from core.scenarios as s
    left join core.frames as f on f.accounting_frame = s.accounting_frame
    left join core.workload_kinds as w on w.workload_kind = s.workload_kind
)
order by scenario_id
