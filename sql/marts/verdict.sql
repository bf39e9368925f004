-- marts.verdict: the answer, one row per scenario x basis x edge device class x method row the
-- scenario's accounting frame admits: a network method (core.frame_network_methods), an
-- allocation policy (core.frame_embodied_policies: the scenario's own, and the frame's others) and
-- a resize power (core.frame_resize_powers), each a row of weights of terms the model computes
-- once (sql/core/model_evaluation.sql). The deterministic R
-- (compute only, and with the scenario's named communication pattern) from the model's
-- evaluation of core.scenarios (its rows of core.model_evaluation: the headline basis and
-- the measured basis, every admitted method), beside the Monte Carlo p05/p50/p95 of the same
-- basis, pattern and method from marts.uncertainty: over the scenario's feasible draws, and over
-- every draw with an infeasible draw counted as a failure (R = 0; the `_all_draws` band and the
-- `share_feasible_*` shares).
-- Feasibility: a fleet that cannot send its traffic over its links does not train. A pattern
-- that splits the model needs more devices for its pipelines to train while all their stages
-- are online (a^S), and outside the paper's frame a fleet is resized to the smallest one whose
-- links carry its traffic, without a cap (resized_from: the compute-equivalent count it grew
-- from); a fleet no resize can carry stays over its link. A row is infeasible where its deterministic
-- traffic still exceeds the link, its required rate is unknown, or fewer than
-- core.claim.feasible_share_min of its draws are feasible.
-- The claim: each scenario names the claim it tests (claim_id) and is read against that claim's
-- row of core.claim (its bounds); a scenario whose claim is not a cloud/edge ratio R has no rows here.
-- Methods that are physical: a network method that charges the home lines more power
-- (network_w_per_line) than the scenario's line_power_physical_max_w (twice a line's measured
-- maximum) is not physical for that row (network_physical false): it stays a visible bound but
-- sets no verdict (unless no method of the frame is physical).
-- `verdict_if_feasible` reads the range of R with communication over every physical method row the
-- frame admits (the lowest p05 and the highest p95 of the feasible draws) against the claim's low
-- end (core.claim), as if the fleet were feasible. `verdict` reads the same range over every draw
-- (the all-draw band), unless the fleet is infeasible; `verdict_driver_method`, `_policy` and
-- `_resize_power` name the method row whose bound sets `verdict`'s reading (`verdict_if_feasible`'s
-- where the fleet is infeasible). R compute only does not depend on the network method or the
-- link: each row reads it at its own allocation policy, under the frame's headline network method
-- and resize power.
-- `verdict_deciding_assumptions` names the unsourced parameters (`assumed`, `calibrated`, `secondary`) whose range alone, one at a time
-- (marts.sensitivity: the headline basis, the scenario's pattern and the frame's headline
-- method), moves deterministic R with communication across 1 or the claim's low end.
-- Edge training designs: where a scenario's frame resizes its fleet, R with communication is evaluated for every
-- edge training design (core.patterns edge_design: the rigid pipeline, DiLoCo through a server, DiLoCo's ring, DiLoCo
-- across pipelines), one row each (`edge_design`). A design is admissible where its links carry its traffic below
-- the scenario's link_headroom and its devices hold its training memory (`design_admissible`, and why not in
-- `design_inadmissible_reason`). Per scenario, basis, class and method row, `is_best_design` marks the admissible
-- design with the highest R (the lowest edge carbon), `is_worst_design` the admissible one with the lowest (where
-- none is admissible, the highest and lowest R of all). On the headline basis the best row's Monte Carlo bands read,
-- per draw, the best admissible design (marts.uncertainty best_design rows; on the measured basis beside it, its own
-- design's draws); the verdict is read on the best designs.
-- `is_answer`: the row README.md and `make run` show for a scenario outside the paper's frame and a class: the
-- headline basis, the best design, at the method row that sets the verdict.
-- `gpu_rate_id`: on a basis that weighs measured training rates (core.bases measured_rate), the
-- measured row the cloud GPU's rate comes from: the key of the factor_ref of the scenario's
-- GPU-rate parameter row (a staging.training_throughput throughput_id); null on other bases.
-- `edge_rate_id`: on such a basis, the measured row the edge class's rate comes from: the key of the
-- factor_ref of the scenario's `<class>_measured_tflops` row (the measured device's achieved TFLOPS, over whose FP32
-- peak the class's `<class>_measured_share` is read); null on other bases or where the class names none.
-- each scenario's accounting frame (a row of core.frames), named communication pattern and claim
with frames as (
    select scenario_id, accounting_frame, comm_pattern, headline_network_method, claim_id
    from core.scenarios
    inner join core.frames using (accounting_frame)
),

-- the row of core.claim of each scenario's claim: a scenario whose claim is not a ratio R has none
claims as (
    select frames.scenario_id, claim.*
    from frames
    inner join core.claim as claim on claim.claim_id = frames.claim_id
),

-- the model's rows (core.model_evaluation, each scenario as it stands: family 'base') this mart reads: the
-- headline basis, and the measured basis (core.bases measured) beside it on the patterns read here (the
-- scenario's own and its edge training designs, is_scenario_design, and the one that moves no bytes)
evaluated as (
    select model.*
    from core.model_evaluation as model
    inner join core.bases on model.basis = core.bases.basis
    inner join core.patterns on model.pattern = core.patterns.pattern
    where model.family = 'base' and (model.is_headline
        or (core.bases.measured and (not core.patterns.moves_bytes or model.is_scenario_design)))
),

-- the key of the row the scenario's measured GPU rate is read from (table.key_column=key.column)
gpu_rates as (
    select scenario_id, regexp_extract(factor_ref, '=([^=]+)\.[a-z0-9_]+$', 1) as gpu_rate_id
    from core.scenario_parameters
    where parameter = $gpu_rate_parameter and factor_ref is not null
),

-- the key of the row each edge class's measured rate is read from, by class
edge_rates as (
    select
        scenario_id,
        left(parameter, length(parameter) - length($edge_rate_suffix)) as device_class,
        regexp_extract(factor_ref, '^training_throughput\.throughput_id=(.+)\.[a-z0-9_]+$', 1) as edge_rate_id
    from core.scenario_parameters
    where suffix(parameter, $edge_rate_suffix) and factor_ref is not null
),

compute_only as (
    -- R without communication: the rows of the pattern that moves no bytes (core.patterns), one per
    -- allocation policy
    select evaluated.*
    from evaluated
    inner join core.patterns on evaluated.pattern = core.patterns.pattern and not core.patterns.moves_bytes
    inner join frames on evaluated.scenario_id = frames.scenario_id
    where evaluated.network_method = frames.headline_network_method and evaluated.is_headline_resize_power
),

-- R with communication: a row per design the scenario is read on (its own comm_pattern, and its edge training designs)
with_comm as (
    select evaluated.*, core.patterns.edge_design as weighs_memory
    from evaluated
    inner join core.patterns on core.patterns.pattern = evaluated.pattern
    where evaluated.is_scenario_design
),

mc as (
    select scenario_id, device_class, basis, pattern, best_design, network_method, embodied_policy, resize_power, p05, p50, p95,
           share_r_below_1, share_r_below_4,
           share_link_feasible, p05_all_draws, p50_all_draws, p95_all_draws, share_feasible_r_ge_1, share_feasible_r_ge_4
    from marts.uncertainty
    where metric = 'reduction_factor'
),

-- each design's row, with its own Monte Carlo bands and those of the per-draw best design (best_band)
design_rows as (
    select
        with_comm.scenario_id,
        frames.accounting_frame,
        with_comm.basis,
        with_comm.is_headline,
        with_comm.device_class,
        with_comm.network_method,
        with_comm.embodied_policy,
        with_comm.resize_power,
        with_comm.is_headline_method,
        with_comm.is_headline_policy,
        with_comm.is_headline_resize_power,
        compute_only.devices / compute_only.cloud_gpu_count as devices_per_gpu,
        compute_only.reduction_factor,
        compute.p05,
        compute.p50,
        compute.p95,
        compute.share_r_below_1,
        compute.share_r_below_4,
        frames.comm_pattern,
        with_comm.pattern as edge_design,
        with_comm.design_admissible,
        case when not with_comm.design_admissible then concat_ws('; ',
            case when not with_comm.link_feasible then printf('its traffic needs %.1f%% of each link''s time, above the %.2f%% headroom',
                                                             100 * with_comm.link_time_share, 100 * with_comm.link_headroom) end,
            case when with_comm.weighs_memory and not coalesce(with_comm.memory_feasible, true)
                then printf('needs %.2f GB of memory per device, %.2f GB usable', with_comm.training_memory_gb, with_comm.device_memory_gb) end)
        end as design_inadmissible_reason,
        with_comm.link_headroom,
        with_comm.training_memory_gb,
        with_comm.device_memory_gb,
        with_comm.memory_feasible,
        with_comm.pipeline_stages,
        with_comm.token_overhead,
        with_comm.edge_operational_kgco2e,
        with_comm.edge_embodied_kgco2e,
        with_comm.edge_battery_wear_kgco2e,
        with_comm.comm_kgco2e,
        with_comm.edge_added_kgco2e,
        with_comm.devices / with_comm.cloud_gpu_count as devices_with_comm_per_gpu,
        with_comm.resized_from / with_comm.cloud_gpu_count as resized_from,
        with_comm.reduction_factor as reduction_factor_with_comm,
        comm as own_band,
        best_band as best_band,
        with_comm.link_time_share,
        with_comm.required_link_mb_per_s,
        with_comm.link_mb_per_s,
        compute_only.implied_device_utilisation,
        with_comm.network_w_per_line,
        with_comm.network_physical,
        claim.feasible_share_min,
        -- the best admissible design (the highest R, the lowest edge carbon) and the worst, per method row; where
        -- none is admissible, the highest and lowest R of all
        row_number() over (partition by with_comm.scenario_id, with_comm.basis, with_comm.device_class, with_comm.network_method,
                                        with_comm.embodied_policy, with_comm.resize_power
                           order by with_comm.design_admissible desc, with_comm.reduction_factor desc, with_comm.pattern) = 1
            as is_best_design,
        row_number() over (partition by with_comm.scenario_id, with_comm.basis, with_comm.device_class, with_comm.network_method,
                                        with_comm.embodied_policy, with_comm.resize_power
                           order by with_comm.design_admissible desc, with_comm.reduction_factor asc, with_comm.pattern) = 1
            as is_worst_design
    from with_comm
    inner join frames on with_comm.scenario_id = frames.scenario_id
    inner join compute_only
        on compute_only.scenario_id = with_comm.scenario_id and compute_only.device_class = with_comm.device_class
        and compute_only.basis = with_comm.basis and compute_only.embodied_policy = with_comm.embodied_policy
    inner join mc as compute
        on compute.scenario_id = compute_only.scenario_id and compute.device_class = compute_only.device_class
        and compute.basis = compute_only.basis and compute.pattern = compute_only.pattern
        and compute.network_method = compute_only.network_method and compute.embodied_policy = compute_only.embodied_policy
        and compute.resize_power = compute_only.resize_power
    inner join mc as comm
        on comm.scenario_id = with_comm.scenario_id and comm.device_class = with_comm.device_class
        and comm.basis = with_comm.basis and comm.pattern = with_comm.pattern and not comm.best_design
        and comm.network_method = with_comm.network_method and comm.embodied_policy = with_comm.embodied_policy
        and comm.resize_power = with_comm.resize_power
    left join mc as best_band
        on best_band.best_design and best_band.scenario_id = with_comm.scenario_id and best_band.device_class = with_comm.device_class
        and best_band.basis = with_comm.basis and best_band.network_method = with_comm.network_method
        and best_band.embodied_policy = with_comm.embodied_policy and best_band.resize_power = with_comm.resize_power
    inner join claims as claim on claim.scenario_id = with_comm.scenario_id
),

-- each row's bands: the best design's from the per-draw best design (where the scenario has a choice of designs), every
-- other design's from its own draws
banded as (
    select
        design_rows.* exclude (own_band, best_band),
        case when is_best_design and best_band.scenario_id is not null then best_band else own_band end as band
    from design_rows
),

rows as (
    select
        banded.* exclude (band, feasible_share_min),
        band.p05 as p05_with_comm,
        band.p50 as p50_with_comm,
        band.p95 as p95_with_comm,
        band.share_r_below_1 as share_r_below_1_with_comm,
        band.p05_all_draws as p05_with_comm_all_draws,
        band.p50_all_draws as p50_with_comm_all_draws,
        band.p95_all_draws as p95_with_comm_all_draws,
        band.share_feasible_r_ge_1,
        band.share_feasible_r_ge_4,
        band.share_link_feasible as feasible_share,
        -- a method that is not physical for this row sets no verdict, unless no method of the frame is
        network_physical or not bool_or(network_physical) over (partition by scenario_id, basis, device_class) as sets_verdict,
        coalesce(design_admissible and required_link_mb_per_s is not null and band.share_link_feasible >= feasible_share_min, false)
            as feasible,
        -- the bounds of R with communication `verdict_if_feasible` reads: the feasible draws'
        -- p05-p95, or the deterministic R where no draw is feasible
        coalesce(band.p05, reduction_factor_with_comm) as low_with_comm,
        coalesce(band.p95, reduction_factor_with_comm) as high_with_comm,
        -- the bounds `verdict` reads: every draw, an infeasible draw counted as R = 0
        band.p05_all_draws as low_all_draws,
        band.p95_all_draws as high_all_draws
    from banded
),

-- the frame's reading of each band over its method rows: the lowest low and the highest high, and the rows that set
-- them; a band is the range of R with communication over the draws where the fleet is feasible (`if_feasible`) or over
-- every draw (`all_draws`)
frame_range as (
    select
        scenario_id,
        basis,
        device_class,
        band.kind,
        min(band.low) filter (where sets_verdict) as frame_low,
        max(band.high) filter (where sets_verdict) as frame_high,
        arg_min(method_row, band.low) filter (where sets_verdict) as low_method,
        arg_max(method_row, band.high) filter (where sets_verdict) as high_method,
        bool_and(feasible) as frame_feasible
    from (
        select
            *,
            {'network_method': network_method, 'policy': embodied_policy, 'resize_power': resize_power} as method_row,
            unnest([{'kind': 'if_feasible', 'low': low_with_comm, 'high': high_with_comm},
                    {'kind': 'all_draws', 'low': low_all_draws, 'high': high_all_draws}]) as band
        from rows
        -- the verdict is read on the edge's best admissible design
        where is_best_design
    )
    group by scenario_id, basis, device_class, band.kind
),

-- each band's reading, by one rule; the method row whose bound sets it is the high end's where the band is below the
-- claim, else the low end's
band_readings as (
    select
        frame_range.*,
        {
            'verdict': case
                when frame_high < 1 then $verdict_edge_more
                when frame_low >= claim.claim_low then $verdict_holds
                when frame_high < claim.claim_low then $verdict_below
                else $verdict_uncertain
            end,
            'driver': case when frame_high < claim.claim_low then high_method else low_method end
        } as reading
    from frame_range
    inner join claims as claim on claim.scenario_id = frame_range.scenario_id
),

readings as (
    select
        scenario_id,
        basis,
        device_class,
        any_value(reading) filter (where kind = 'if_feasible') as if_feasible,
        any_value(reading) filter (where kind = 'all_draws') as all_draws,
        bool_and(frame_feasible) as frame_feasible
    from band_readings
    group by scenario_id, basis, device_class
),

-- the method row that sets each reading: over every draw where the fleet is feasible, else as if it were
drivers as (
    select
        readings.*,
        case when frame_feasible then all_draws.verdict else $verdict_infeasible end as verdict,
        case when frame_feasible then all_draws.driver else if_feasible.driver end as verdict_driver
    from readings
),

-- the unsourced parameters (assumed, calibrated or read through another document) whose range alone moves R with communication across 1 or the claim's low end,
-- under the method that sets the verdict (marts.sensitivity: the headline basis, the scenario's pattern)
deciding as (
    select
        sensitivity.scenario_id,
        sensitivity.device_class,
        string_agg(
            sensitivity.parameter || ' ' || printf('%g', sensitivity.value_low) || '-' || printf('%g', sensitivity.value_high)
            || ' (R ' || printf('%.2f', least(sensitivity.reduction_factor_at_low, sensitivity.reduction_factor_at_high))
            || '-' || printf('%.2f', greatest(sensitivity.reduction_factor_at_low, sensitivity.reduction_factor_at_high)) || ')',
            '; ' order by sensitivity.rank) as verdict_deciding_assumptions
    from marts.sensitivity as sensitivity
    inner join frames on frames.scenario_id = sensitivity.scenario_id and frames.comm_pattern = sensitivity.pattern
    inner join (select distinct scenario_id, device_class, basis from rows where is_headline and is_best_design) as headline
        on headline.scenario_id = sensitivity.scenario_id and headline.device_class = sensitivity.device_class
    inner join drivers
        on drivers.scenario_id = headline.scenario_id and drivers.basis = headline.basis
        and drivers.device_class = headline.device_class and drivers.verdict_driver.network_method = sensitivity.network_method
    inner join claims as claim on claim.scenario_id = sensitivity.scenario_id
    where list_contains($unsourced_statuses, sensitivity.status)
        and list_bool_or([least(sensitivity.reduction_factor_at_low, sensitivity.reduction_factor_at_high) < edge
                          and greatest(sensitivity.reduction_factor_at_low, sensitivity.reduction_factor_at_high) >= edge
                          for edge in [1.0, claim.claim_low]])
    group by sensitivity.scenario_id, sensitivity.device_class
)

select
    rows.* exclude (feasible, low_with_comm, high_with_comm, low_all_draws, high_all_draws, sets_verdict),
    claim.claim_id,
    claim.claim_low,
    claim.claim_high,
    drivers.if_feasible.verdict as verdict_if_feasible,
    drivers.verdict_driver.network_method as verdict_driver_method,
    drivers.verdict_driver.policy as verdict_driver_policy,
    drivers.verdict_driver.resize_power as verdict_driver_resize_power,
    drivers.verdict,
    case when rows.is_headline then deciding.verdict_deciding_assumptions end as verdict_deciding_assumptions,
    case when bases.measured_rate > 0 then gpu_rates.gpu_rate_id end as gpu_rate_id,
    case when bases.measured_rate > 0 then nullif(edge_rates.edge_rate_id, '') end as edge_rate_id,
    -- the row README.md and `make run` show: outside the paper's frame, the headline basis and best design at the
    -- method row that sets the verdict
    rows.accounting_frame <> $paper_frame and rows.is_headline and rows.is_best_design
        and rows.network_method = drivers.verdict_driver.network_method and rows.embodied_policy = drivers.verdict_driver.policy
        and rows.resize_power = drivers.verdict_driver.resize_power as is_answer
from rows
inner join drivers using (scenario_id, basis, device_class)
inner join core.bases as bases on bases.basis = rows.basis
left join gpu_rates on gpu_rates.scenario_id = rows.scenario_id
left join edge_rates on edge_rates.scenario_id = rows.scenario_id and edge_rates.device_class = rows.device_class
left join deciding using (scenario_id, device_class)
inner join claims as claim on claim.scenario_id = rows.scenario_id
order by rows.scenario_id, rows.device_class, rows.is_headline desc, rows.basis, rows.network_method, rows.is_headline_policy desc,
    rows.embodied_policy, rows.is_headline_resize_power desc, rows.resize_power, rows.is_best_design desc, rows.edge_design
