-- Energy page (paper Table 1): mean energy per series with its 95% CI, in kJ.
select
    series_id,
    device_id,
    device_class,
    -- a device with several series (the paper's and your own logs) names the series too
    device_id || ' (' || device_class || ')'
        || case when count(*) over (partition by device_id) > 1 then ', ' || series_id else '' end as device_label,
    workload,
    n_runs,
    energy_j_mean / 1000 as energy_kj,
    energy_j_ci95_low / 1000 as ci95_low_kj,
    energy_j_ci95_high / 1000 as ci95_high_kj,
    (energy_j_ci95_high - energy_j_ci95_low) / 2 / energy_j_mean as ci95_half_width_rel,
    duration_s_mean,
    mean_power_w_mean,
    energy_ratio_vs_cloud_gpu,
    slowdown_vs_cloud_gpu,
    reference_device_id,
    is_synthetic
from marts.training_energy
order by energy_j_mean desc
