-- Verdict page: R per scenario, basis, device class and network method with its Monte Carlo
-- p05-p95 (the feasible draws), compute only and with the scenario's named communication
-- pattern, one row per mark (marts.verdict).
select
    scenario_id,
    accounting_frame,
    basis,
    is_headline,
    device_class,
    network_method,
    devices_per_gpu,
    devices_with_comm_per_gpu,
    scenario_id || ' [' || basis || (case when is_headline then ', headline' else '' end) || ', ' || network_method || ']' as row_label,
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
    verdict,
    claim_low,
    claim_high
from marts.verdict
cross join (values ('compute only'), ('with communication')) as sides (side)
order by accounting_frame, scenario_id, is_headline desc, basis, device_class, network_method, side
