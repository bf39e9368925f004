-- core.scenarios: one row per scenario, one column per model parameter (from
-- core.scenario_parameters). A parameter a scenario does not set is null.
with parameters as (
    select * from core.scenario_parameters
),

wide as (
    select
        scenario_id,
        max(value) filter (where parameter = 'horizon_years') as horizon_years,
        max(value) filter (where parameter = 'edge_hours_per_day') as edge_hours_per_day,
        max(value) filter (where parameter = 'cloud_hours_per_day') as cloud_hours_per_day,
        max(value) filter (where parameter = 'cloud_gpu_power_w') as cloud_gpu_power_w,
        max(value) filter (where parameter = 'cloud_utilisation') as cloud_utilisation,
        max(value) filter (where parameter = 'cloud_pue') as cloud_pue,
        max(value) filter (where parameter = 'cloud_gpu_embodied_kgco2e') as cloud_gpu_embodied_kgco2e,
        max(value) filter (where parameter = 'cloud_grid_gco2e_per_kwh') as cloud_grid_gco2e_per_kwh,
        max(value) filter (where parameter = 'edge_grid_gco2e_per_kwh') as edge_grid_gco2e_per_kwh,
        max(value) filter (where parameter = 'cloud_gpu_tflops') as cloud_gpu_tflops,
        max(value) filter (where parameter = 'laptop_tflops') as laptop_tflops,
        max(value) filter (where parameter = 'phone_tflops') as phone_tflops,
        max(value) filter (where parameter = 'laptop_devices_per_gpu') as laptop_devices_per_gpu,
        max(value) filter (where parameter = 'phone_devices_per_gpu') as phone_devices_per_gpu,
        max(value) filter (where parameter = 'cloud_table1_energy_j') as cloud_table1_energy_j,
        max(value) filter (where parameter = 'laptop_table1_energy_j') as laptop_table1_energy_j,
        max(value) filter (where parameter = 'phone_table1_energy_j') as phone_table1_energy_j,
        max(value) filter (where parameter = 'laptop_train_power_w') as laptop_train_power_w,
        max(value) filter (where parameter = 'phone_train_power_w') as phone_train_power_w,
        max(value) filter (where parameter = 'wifi_radio_power_w') as wifi_radio_power_w,
        max(value) filter (where parameter = 'edge_bandwidth_mb_per_s') as edge_bandwidth_mb_per_s,
        max(value) filter (where parameter = 'link_utilisation') as link_utilisation,
        max(value) filter (where parameter = 'network_kwh_per_gb') as network_kwh_per_gb,
        max(value) filter (where parameter = 'bytes_per_param') as bytes_per_param,
        max(value) filter (where parameter = 'workload_steps') as workload_steps,
        max(value) filter (where parameter = 'laptop_embodied_kgco2e') as laptop_embodied_kgco2e,
        max(value) filter (where parameter = 'laptop_nonuse_share') as laptop_nonuse_share,
        max(value) filter (where parameter = 'laptop_lifetime_years') as laptop_lifetime_years,
        max(value) filter (where parameter = 'phone_embodied_kgco2e') as phone_embodied_kgco2e,
        max(value) filter (where parameter = 'phone_nonuse_share') as phone_nonuse_share,
        max(value) filter (where parameter = 'phone_lifetime_years') as phone_lifetime_years,
        max(value) filter (where parameter = 'edge_embodied_allocation') as edge_embodied_allocation,
        max(value) filter (where parameter = 'table2_devices') as table2_devices,
        max(value) filter (where parameter = 'batch_size') as batch_size,
        max(value) filter (where parameter = 'sequence_length') as sequence_length,
        max(value) filter (where parameter = 'activation_compression') as activation_compression
    from parameters
    group by scenario_id
)

select * from wide order by scenario_id
