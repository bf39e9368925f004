-- The verdict in a few lines, for the end of `edge-carbon run`: marts.verdict's headline rows of
-- the realistic frames (not the paper's own, `as_published`), each the method row that sets its
-- verdict (one per scenario and device class): R with communication, its p05-p95 over every
-- Monte Carlo draw (a draw whose fleet cannot send its traffic counted as R = 0), and the verdict.
select
    scenario_id,
    device_class,
    reduction_factor_with_comm,
    p05_with_comm_all_draws,
    p95_with_comm_all_draws,
    claim_low,
    claim_high,
    verdict
from marts.verdict
where is_headline
    and accounting_frame <> 'as_published'
    and network_method = verdict_driver_method
    and embodied_policy = verdict_driver_policy
    and resize_power = verdict_driver_resize_power
order by scenario_id, device_class
