-- README's headline table (edge-carbon docs): per scenario outside the paper's own frame
-- ($paper_frame) and device class, the marts.verdict row that sets its headline verdict: the
-- headline basis, at the method row the verdict names (network method, allocation policy and
-- resize power that set it), the row the README's answer quotes.
select scenario_id, device_class, reduction_factor_with_comm, p05_with_comm_all_draws, p95_with_comm_all_draws,
    share_feasible_r_ge_4, devices_with_comm_per_gpu, resized_from, verdict
from marts.verdict
where is_headline
    and accounting_frame <> $paper_frame
    and network_method = verdict_driver_method
    and embodied_policy = verdict_driver_policy
    and resize_power = verdict_driver_resize_power
order by accounting_frame, scenario_id, device_class
