-- The power series a new scenario reads (`edge-carbon scenario new --from-series`): its device,
-- the device's class and FP32 peak, and whether its mean power has a 95% CI to range over.
select
    series.series_id,
    series.device_id,
    specs.device_class,
    specs.fp32_tflops,
    series.model,
    series.n_runs,
    series.mean_power_w_mean,
    series.mean_power_w_ci95_low,
    series.mean_power_w_ci95_high,
    series.is_synthetic
from staging.benchmark_series as series
left join staging.device_specs as specs
    on specs.device_id = series.device_id
where series.series_id = $series_id
