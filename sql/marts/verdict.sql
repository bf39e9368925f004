-- marts.verdict: the answer, one row per scenario x accounting frame x basis x edge device
-- class. The deterministic R (compute only, and with the scenario's named communication
-- pattern) from marts.fleet_equivalence, beside the Monte Carlo p05/p50/p95 of the same basis
-- and pattern from marts.uncertainty (the scenario's own draws). Bases: the scenario's headline
-- and measured_throughput. The claim is R of 4-8x; `verdict` reads the Monte Carlo range of R
-- with communication against it.
with frames as (
    select
        scenario_id,
        accounting_frame_name(accounting_frame) as accounting_frame
    from core.scenarios
),

det as (
    select * from marts.fleet_equivalence where is_headline or basis = 'measured_throughput'
),

mc as (
    select scenario_id, device_class, basis, pattern, p05, p50, p95, share_r_below_1, share_r_below_4
    from marts.uncertainty
    where metric = 'reduction_factor'
)

select
    det.scenario_id,
    frames.accounting_frame,
    det.basis,
    det.is_headline,
    det.device_class,
    det.devices_per_gpu,
    det.reduction_factor,
    compute.p05 as p05,
    compute.p50 as p50,
    compute.p95 as p95,
    compute.share_r_below_1,
    compute.share_r_below_4,
    det.comm_pattern,
    det.reduction_factor_with_comm,
    comm.p05 as p05_with_comm,
    comm.p50 as p50_with_comm,
    comm.p95 as p95_with_comm,
    comm.share_r_below_1 as share_r_below_1_with_comm,
    det.link_time_share,
    case
        when comm.p95 < 1 then 'edge emits more'
        when comm.p05 >= 4 then 'claim holds (R >= 4)'
        when comm.p95 < 4 then 'below the claim (R < 4)'
        else 'claim uncertain (p05-p95 spans 4)'
    end as verdict
from det
inner join frames using (scenario_id)
inner join mc as compute
    on compute.scenario_id = det.scenario_id and compute.device_class = det.device_class
    and compute.basis = det.basis and compute.pattern = 'none'
inner join mc as comm
    on comm.scenario_id = det.scenario_id and comm.device_class = det.device_class
    and comm.basis = det.basis and comm.pattern = det.comm_pattern
order by det.scenario_id, det.device_class, det.is_headline desc, det.basis
