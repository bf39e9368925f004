-- Verdict page: R per scenario, basis and device class with its Monte Carlo p05-p95, compute
-- only and with the scenario's named communication pattern, one row per mark (marts.verdict).
select
    scenario_id,
    accounting_frame,
    basis,
    is_headline,
    device_class,
    devices_per_gpu,
    scenario_id || ' [' || basis || (case when is_headline then ', headline' else '' end) || ']' as row_label,
    side,
    case side when 'compute only' then reduction_factor else reduction_factor_with_comm end as r,
    case side when 'compute only' then p05 else p05_with_comm end as p05,
    case side when 'compute only' then p50 else p50_with_comm end as p50,
    case side when 'compute only' then p95 else p95_with_comm end as p95,
    comm_pattern,
    link_time_share,
    verdict
from marts.verdict
cross join (values ('compute only'), ('with communication')) as sides (side)
order by accounting_frame, scenario_id, is_headline desc, basis, device_class, side
