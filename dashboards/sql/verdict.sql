-- Verdict page: R per scenario, basis, device class and method row (network method, and the
-- allocation policy and resize power where they are not the headline's) with its Monte Carlo
-- p05-p95 (the feasible draws), compute only and with the scenario's named communication
-- pattern, one row per mark (marts.verdict): the edge's best and worst admissible designs.
select
    scenario_id,
    accounting_frame,
    basis,
    is_headline,
    device_class,
    network_method,
    embodied_policy,
    resize_power,
    -- the method row: its network method, and its policy and resize power where they are not the headline's
    network_method || case when is_headline_policy then '' else ', ' || embodied_policy end
        || case when is_headline_resize_power then '' else ', ' || resize_power end as method_row,
    devices_per_gpu,
    devices_with_comm_per_gpu,
    scenario_id || ' [' || basis || (case when is_headline then ', headline' else '' end) || ', ' || network_method
        || case when is_headline_policy then '' else ', ' || embodied_policy end
        || case when is_headline_resize_power then '' else ', ' || resize_power end || '] ' || edge_design
        || case when is_best_design then ' (best)' when is_worst_design then ' (worst)' else '' end as row_label,
    edge_design,
    is_best_design,
    side,
    case side when 'compute only' then reduction_factor else reduction_factor_with_comm end as r,
    case side when 'compute only' then p05 else p05_with_comm end as p05,
    case side when 'compute only' then p50 else p50_with_comm end as p50,
    case side when 'compute only' then p95 else p95_with_comm end as p95,
    comm_pattern,
    link_time_share,
    required_link_mb_per_s,
    link_mb_per_s,
    feasible_share,
    implied_device_utilisation,
    verdict_if_feasible,
    verdict_driver_method,
    verdict_driver_policy,
    verdict_driver_resize_power,
    verdict,
    claim_low,
    claim_high
from marts.verdict
cross join (values ('compute only'), ('with communication')) as sides (side)
where is_best_design or is_worst_design
order by accounting_frame, scenario_id, is_headline desc, basis, device_class, network_method, is_headline_policy desc, embodied_policy,
    is_headline_resize_power desc, resize_power, is_best_design desc, side
