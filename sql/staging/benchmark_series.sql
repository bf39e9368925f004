-- staging.benchmark_series: repeated runs of one device and workload -> mean energy and
-- mean power, each with its Student-t 95% confidence interval.
--
-- Reads the relation benchmark_runs (the validated runs, registered by the caller, with the
-- paper claim each run's source reproduces in `reproduces`; the caller has checked that a
-- series' runs agree on it and on device, model, workload and is_synthetic).
-- Bound parameters:
--   $t_df   INTEGER[]  degrees of freedom present (n_runs - 1, for series with >= 2 runs)
--   $t_975  DOUBLE[]   t(0.975, df) for each, same order (DuckDB has no t quantile)
-- The series' source is its first run's (earliest started_at, then run_id).
with t_table as (
    select
        unnest(cast($t_df as integer[])) as df,
        unnest(cast($t_975 as double[])) as t_975
),

series_runs as (
    select *
    from benchmark_runs
    where series_id is not null
),

per_series as (
    select
        series_id,
        any_value(device_id) as device_id,
        any_value(model) as model,
        any_value(workload) as workload,
        count(*) as n_runs,
        avg(energy_j) as energy_j_mean,
        stddev_samp(energy_j) as energy_j_sd,
        avg(duration_s) as duration_s_mean,
        avg(mean_power_w) as mean_power_w_mean,
        stddev_samp(mean_power_w) as mean_power_w_sd,
        bool_or(is_synthetic) as is_synthetic,
        any_value(reproduces) as reproduces,
        first(source_id order by started_at asc nulls last, run_id asc) as source_id,
        first(source_file order by started_at asc nulls last, run_id asc) as source_file
    from series_runs
    group by series_id
)

select
    per_series.series_id,
    per_series.device_id,
    per_series.model,
    per_series.workload,
    per_series.n_runs,
    per_series.energy_j_mean,
    per_series.energy_j_sd,
    t_table.t_975 as ci95_t,
    per_series.energy_j_mean - t_table.t_975 * per_series.energy_j_sd / sqrt(per_series.n_runs) as energy_j_ci95_low,
    per_series.energy_j_mean + t_table.t_975 * per_series.energy_j_sd / sqrt(per_series.n_runs) as energy_j_ci95_high,
    per_series.duration_s_mean,
    per_series.mean_power_w_mean,
    per_series.mean_power_w_mean - t_table.t_975 * per_series.mean_power_w_sd / sqrt(per_series.n_runs) as mean_power_w_ci95_low,
    per_series.mean_power_w_mean + t_table.t_975 * per_series.mean_power_w_sd / sqrt(per_series.n_runs) as mean_power_w_ci95_high,
    per_series.is_synthetic,
    per_series.reproduces,
    per_series.source_id,
    per_series.source_file,
    cast(null as bigint) as source_row
from per_series
left join t_table on t_table.df = per_series.n_runs - 1
order by per_series.series_id
