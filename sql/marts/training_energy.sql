-- marts.training_energy (paper Table 1). Grain: device x workload (one benchmark series).
-- Energy per run with its 95% confidence interval, duration, mean power, and the ratio
-- against the reference cloud GPU's series of the same workload ($reference_device).
with series as (
    select * from staging.benchmark_series
),

specs as (
    select base_device_id, any_value(device_class order by device_id) as device_class
    from staging.device_specs
    group by base_device_id
),

reference as (
    select workload, energy_j_mean as reference_energy_j, duration_s_mean as reference_duration_s
    from series
    where device_id = $reference_device
),

joined as (
    select
        series.series_id,
        series.device_id,
        coalesce(specs.device_class, 'unknown') as device_class,
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
        series.is_synthetic,
        series.source_id
    from series
    left join specs on specs.base_device_id = series.device_id
    left join reference using (workload)
)

select * from joined order by workload, energy_j_mean
