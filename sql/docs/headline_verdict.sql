-- The answer rows (README's answer, headline table and causes block, and the end of `edge-carbon run`): marts.verdict's
-- is_answer rows, one per scenario outside the paper's own frame and device class (the headline basis, the edge's best
-- admissible design, at the method row that sets the verdict), each with the worst admissible design of the same
-- method row beside it and its edge carbon split by cause.
select
    answer.scenario_id,
    answer.accounting_frame,
    answer.device_class,
    answer.edge_design,
    answer.reduction_factor_with_comm,
    answer.p05_with_comm_all_draws,
    answer.p95_with_comm_all_draws,
    answer.share_feasible_r_ge_4,
    answer.devices_with_comm_per_gpu,
    answer.resized_from,
    answer.claim_low,
    answer.claim_high,
    answer.verdict,
    worst.edge_design as worst_design,
    worst.reduction_factor_with_comm as worst_reduction_factor_with_comm,
    -- the edge's added carbon by cause: the devices' embodied carbon (battery wear apart), their electricity, the
    -- network and radios, and battery wear
    (answer.edge_embodied_kgco2e - coalesce(answer.edge_battery_wear_kgco2e, 0)) / answer.edge_added_kgco2e as embodied_share,
    answer.edge_operational_kgco2e / answer.edge_added_kgco2e as electricity_share,
    answer.comm_kgco2e / answer.edge_added_kgco2e as network_share,
    coalesce(answer.edge_battery_wear_kgco2e, 0) / answer.edge_added_kgco2e as battery_wear_share,
    answer.edge_added_kgco2e
from marts.verdict as answer
left join marts.verdict as worst
    on worst.is_worst_design and worst.scenario_id = answer.scenario_id and worst.basis = answer.basis
    and worst.device_class = answer.device_class and worst.network_method = answer.network_method
    and worst.embodied_policy = answer.embodied_policy and worst.resize_power = answer.resize_power
where answer.is_answer
order by answer.accounting_frame, answer.scenario_id, answer.device_class
