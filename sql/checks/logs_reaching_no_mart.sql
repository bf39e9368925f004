-- Registered power logs (staging.sources rows of staging.power_samples) whose run reaches no
-- mart: a run reaches marts.training_energy (and, through its series, every scenario that reads
-- it) only as one of a series, so a log reaches no mart when its run was quarantined (no valid
-- samples, an unknown device...) or has no series_id. With what the warehouse says of each:
-- its runs, those with a series_id, the first reason a run was quarantined, and its quarantined
-- samples (distinct lines) with their checks.
with logs as (
    select source_id, path, manifest_file
    from staging.sources
    where table_name = 'staging.power_samples'
),

runs as (
    select
        source_id,
        count(*) as n_runs,
        count(series_id) as n_in_series
    from staging.benchmark_runs
    group by source_id
),

reaching as (
    select distinct runs.source_id
    from staging.benchmark_runs as runs
    inner join marts.training_energy as series using (series_id)
),

run_rejects as (
    select
        source_id,
        min(reason) as run_reason
    from quarantine.rejected_rows
    where table_name = 'staging.benchmark_runs'
    group by source_id
),

sample_rejects as (
    select
        source_id,
        count(distinct coalesce(source_row, -1)) as n_samples_rejected,
        string_agg(distinct check_name, ', ' order by check_name) as sample_checks
    from quarantine.rejected_rows
    where table_name = 'staging.power_samples'
    group by source_id
)

select
    logs.source_id,
    logs.path,
    logs.manifest_file,
    coalesce(runs.n_runs, 0) as n_runs,
    coalesce(runs.n_in_series, 0) as n_in_series,
    run_rejects.run_reason,
    coalesce(sample_rejects.n_samples_rejected, 0) as n_samples_rejected,
    sample_rejects.sample_checks
from logs
left join runs using (source_id)
left join run_rejects using (source_id)
left join sample_rejects using (source_id)
where logs.source_id not in (select reaching.source_id from reaching)
order by logs.source_id
