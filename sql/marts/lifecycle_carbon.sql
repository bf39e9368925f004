-- asset: group=marts
-- marts.lifecycle_carbon (paper Fig. 4). Grain: scenario x device (the cloud GPU and every edge
-- device class the model evaluates that has a manufacturer footprint).
-- Reads the model's per-unit terms (sql/core/model_evaluation.sql over core.scenarios, compute only,
-- each class's headline basis and network method: its rows of core.model_evaluation) and
-- recombines none of them, so the terms are counted over the job's years (job_years: the
-- scenario's horizon_years, or its workload's duration) exactly as in R:
-- Cloud GPU: embodied = the scenario's per-GPU factor, charged in full to the job, or
--   amortised over the node's life where its frame does (core.frames cloud_embodied_rule); operational = (GPU power +
--   host share) x utilisation x cloud hours/day x 365 x T x PUE x (1 + cluster comm share) x CI.
-- Edge classes: embodied = report total x non-use share x min(T / report lifetime, 1);
--   operational = online share x training power x wall factor (charger and battery losses) x
--   the class's hours/day x 365 x T x CI.
with evaluated as (
    -- the model's rows (core.model_evaluation) this mart reads: each scenario as it stands (family 'base'), its
    -- headline basis and method row
    select * from core.model_evaluation where family = 'base' and is_headline and is_headline_method
),

s as (
    select scenarios.scenario_id, frames.cloud_embodied_rule
    from core.scenarios as scenarios
    inner join core.frames as frames using (accounting_frame)
),

model as (
    -- compute only: the rows of the pattern that moves no bytes (core.patterns)
    select evaluated.*
    from evaluated
    inner join core.patterns on evaluated.pattern = core.patterns.pattern and not core.patterns.moves_bytes
    where evaluated.is_headline and evaluated.is_headline_method and evaluated.device_class <> 'fleet'
),

devices as (
    select
        model.scenario_id,
        'cloud_gpu' as device_class,
        any_value(model.job_years) as job_years,
        any_value(model.cloud_embodied_per_gpu_kgco2e) as embodied_kgco2e,
        any_value(model.cloud_operational_per_gpu_kgco2e) as operational_kgco2e,
        any_value(s.cloud_embodied_rule) as embodied_rule
    from model
    inner join s using (scenario_id)
    group by model.scenario_id
    union all
    select
        scenario_id,
        device_class,
        job_years,
        device_embodied_kgco2e,
        device_operational_kgco2e,
        'report total x non-use share x min(T / lifetime, 1)'
    from model
    -- a class without a manufacturer footprint has no lifecycle row
    where device_embodied_kgco2e is not null
)

select
    scenario_id,
    device_class,
    job_years as horizon_years,
    embodied_kgco2e,
    operational_kgco2e,
    embodied_kgco2e + operational_kgco2e as total_kgco2e,
    embodied_kgco2e / (embodied_kgco2e + operational_kgco2e) as embodied_share,
    operational_kgco2e / (embodied_kgco2e + operational_kgco2e) as operational_share,
    embodied_rule
from devices
order by scenario_id, device_class
