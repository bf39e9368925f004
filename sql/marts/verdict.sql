-- marts.verdict: the answer, one row per scenario x basis x edge device class x network method
-- the scenario's accounting frame admits (core.frame_network_methods). The deterministic R
-- (compute only, and with the scenario's named communication pattern) from the model's
-- evaluation of core.scenarios (read here as the relation `evaluated`: the headline basis and
-- measured_throughput, every admitted method), beside the Monte Carlo p05/p50/p95 of the same
-- basis, pattern and method from marts.uncertainty (the scenario's own feasible draws).
-- Feasibility: a fleet that cannot send its traffic over its links does not train. A pattern
-- that splits the model needs more devices for its pipelines to train while all their stages
-- are online (a^S), and outside the paper's frame a fleet is resized to the smallest one whose
-- links carry its traffic, without a cap (resized_from: the compute-equivalent count it grew
-- from); a fleet no resize can carry stays over its link. A row is infeasible where its deterministic
-- traffic still exceeds the link, its required rate is unknown, or fewer than
-- $feasible_share_min of its draws are feasible.
-- `verdict_if_feasible` reads the range of R with communication over every method the frame
-- admits (the lowest p05 and the highest p95) against the claim's low end (core.claim);
-- `verdict_driver_method` names the method whose bound sets that reading; `verdict` is it,
-- unless the fleet is infeasible.
-- each scenario's accounting frame (a row of core.frames) and named communication pattern
with frames as (
    select scenario_id, accounting_frame, comm_pattern
    from core.scenarios
    inner join core.frames using (accounting_frame)
),

compute_only as (
    -- R without communication: the rows of the pattern that moves no bytes (core.patterns)
    select evaluated.*
    from evaluated
    inner join core.patterns on evaluated.pattern = core.patterns.pattern and not core.patterns.moves_bytes
),

with_comm as (
    select evaluated.*
    from evaluated
    inner join frames on evaluated.scenario_id = frames.scenario_id and evaluated.pattern = frames.comm_pattern
),

mc as (
    select scenario_id, device_class, basis, pattern, network_method, p05, p50, p95, share_r_below_1, share_r_below_4,
           share_link_feasible
    from marts.uncertainty
    where metric = 'reduction_factor'
),

rows as (
    select
        compute_only.scenario_id,
        frames.accounting_frame,
        compute_only.basis,
        compute_only.is_headline,
        compute_only.device_class,
        compute_only.network_method,
        compute_only.is_headline_method,
        compute_only.devices / compute_only.cloud_gpu_count as devices_per_gpu,
        compute_only.reduction_factor,
        compute.p05,
        compute.p50,
        compute.p95,
        compute.share_r_below_1,
        compute.share_r_below_4,
        frames.comm_pattern,
        with_comm.devices / with_comm.cloud_gpu_count as devices_with_comm_per_gpu,
        with_comm.resized_from / with_comm.cloud_gpu_count as resized_from,
        with_comm.reduction_factor as reduction_factor_with_comm,
        comm.p05 as p05_with_comm,
        comm.p50 as p50_with_comm,
        comm.p95 as p95_with_comm,
        comm.share_r_below_1 as share_r_below_1_with_comm,
        with_comm.link_time_share,
        with_comm.required_link_mb_per_s,
        with_comm.link_mb_per_s,
        comm.share_link_feasible as feasible_share,
        compute_only.implied_device_utilisation,
        coalesce(with_comm.link_feasible and with_comm.required_link_mb_per_s is not null
                 and comm.share_link_feasible >= $feasible_share_min, false) as feasible,
        -- the bounds of R with communication this row's range reads: the feasible draws'
        -- p05-p95, or the deterministic R where no draw is feasible
        coalesce(comm.p05, with_comm.reduction_factor) as low_with_comm,
        coalesce(comm.p95, with_comm.reduction_factor) as high_with_comm
    from compute_only
    inner join frames on compute_only.scenario_id = frames.scenario_id
    inner join with_comm
        on with_comm.scenario_id = compute_only.scenario_id and with_comm.device_class = compute_only.device_class
        and with_comm.basis = compute_only.basis and with_comm.network_method = compute_only.network_method
    inner join mc as compute
        on compute.scenario_id = compute_only.scenario_id and compute.device_class = compute_only.device_class
        and compute.basis = compute_only.basis and compute.pattern = compute_only.pattern and compute.network_method = compute_only.network_method
    inner join mc as comm
        on comm.scenario_id = compute_only.scenario_id and comm.device_class = compute_only.device_class
        and comm.basis = compute_only.basis and comm.pattern = frames.comm_pattern
        and comm.network_method = compute_only.network_method
),

-- the frame's reading over its methods: the lowest low and the highest high, and the methods that set them
frame_range as (
    select
        scenario_id,
        basis,
        device_class,
        min(low_with_comm) as frame_low,
        max(high_with_comm) as frame_high,
        arg_min(network_method, low_with_comm) as low_method,
        arg_max(network_method, high_with_comm) as high_method,
        bool_and(feasible) as frame_feasible
    from rows
    group by scenario_id, basis, device_class
),

readings as (
    select
        frame_range.*,
        case
            when frame_high < 1 then $verdict_edge_more
            when frame_low >= claim.claim_low then $verdict_holds
            when frame_high < claim.claim_low then $verdict_below
            else $verdict_uncertain
        end as verdict_if_feasible,
        case
            when frame_high < claim.claim_low then high_method
            else low_method
        end as verdict_driver_method
    from frame_range
    cross join core.claim as claim
)

select
    rows.* exclude (feasible, low_with_comm, high_with_comm),
    claim.claim_low,
    claim.claim_high,
    readings.verdict_if_feasible,
    readings.verdict_driver_method,
    case when readings.frame_feasible then readings.verdict_if_feasible else $verdict_infeasible end as verdict
from rows
inner join readings using (scenario_id, basis, device_class)
cross join core.claim as claim
order by rows.scenario_id, rows.device_class, rows.is_headline desc, rows.basis, rows.network_method
