-- marts.training_energy (paper Table 1). Grain: one benchmark series (repeated runs of one device
-- and workload); any number of series may share a device and workload.
-- Energy per run with its 95% confidence interval, duration, mean power, and the ratio
-- against the reference cloud GPU's series of the same workload ($reference_device): the one
-- that reproduces the paper (option reproduces) where there is one, else its first by series_id,
-- so a second series of the reference device (a user's own log) neither doubles a row nor moves a ratio.
with series as (
    select * from staging.benchmark_series
),

specs as (
    -- a run names its device by base_device_id; every run's device has a row (pipelines/ingest/devices.py)
    select base_device_id, any_value(device_class order by device_id) as device_class
    from staging.device_specs
    group by base_device_id
),

reference as (
    select
        workload,
        series_id as reference_series_id,
        energy_j_mean as reference_energy_j,
        duration_s_mean as reference_duration_s
    from series
    where device_id = $reference_device
    qualify row_number() over (partition by workload order by reproduces is null, series_id) = 1
),

joined as (
    select
        series.series_id,
        series.device_id,
        specs.device_class,
        series.model,
        series.workload,
        series.n_runs,
        series.energy_j_mean,
        series.energy_j_ci95_low,
        series.energy_j_ci95_high,
        series.duration_s_mean,
        series.mean_power_w_mean,
        reference.reference_energy_j / series.energy_j_mean as energy_ratio_vs_cloud_gpu,
        series.duration_s_mean / reference.reference_duration_s as slowdown_vs_cloud_gpu,
        $reference_device as reference_device_id,
        reference.reference_series_id,
        series.is_synthetic,
        series.reproduces,
        series.source_id
    from series
    left join specs on specs.base_device_id = series.device_id
    left join reference using (workload)
)

select * from joined order by workload, energy_j_mean, series_id
