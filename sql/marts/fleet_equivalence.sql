-- marts.fleet_equivalence (paper Fig. 5). Grain: scenario x edge device class x basis.
-- Devices per cloud GPU on peak FLOPS: N = ceil((F_gpu x h_gpu) / (F_dev x h_dev)), unless the
-- scenario states the count (the paper's text and figure counts, status 'paper').
-- Edge added carbon over T = N x P_train x h_dev x 365 x T x CI_edge (+ embodied allocation).
-- Communication over T = N x (radio power x h_dev x 365 x T x link utilisation
--   + GB moved at the link bandwidth x network kWh/GB) x CI_edge.
-- Reduction factor R = cloud GPU lifecycle total / edge added (with and without communication).
with s as (
    select * from core.scenarios
),

cloud as (
    select scenario_id, total_kgco2e as cloud_total_kgco2e
    from marts.lifecycle_carbon
    where device_class = 'cloud_gpu'
),

lifecycle_edge as (
    select scenario_id, device_class, embodied_kgco2e as device_embodied_kgco2e
    from marts.lifecycle_carbon
    where device_class <> 'cloud_gpu'
),

edge as (
    select scenario_id, 'laptop' as device_class, laptop_tflops as device_tflops,
        laptop_train_power_w as train_power_w, laptop_devices_per_gpu as stated_devices
    from s
    union all
    select scenario_id, 'phone', phone_tflops, phone_train_power_w, phone_devices_per_gpu
    from s
),

counted as (
    select
        edge.*,
        'peak_flops' as basis,
        s.cloud_gpu_tflops,
        s.cloud_hours_per_day,
        s.edge_hours_per_day,
        s.horizon_years,
        s.edge_grid_gco2e_per_kwh,
        (s.cloud_gpu_tflops * s.cloud_hours_per_day) / (edge.device_tflops * s.edge_hours_per_day) as devices_exact,
        -- the small epsilon keeps an exact ratio such as 15.000000000001 from rounding up to 16
        ceil((s.cloud_gpu_tflops * s.cloud_hours_per_day) / (edge.device_tflops * s.edge_hours_per_day) - 1e-9) as devices_formula,
        s.wifi_radio_power_w,
        s.edge_bandwidth_mb_per_s,
        s.link_utilisation,
        s.network_kwh_per_gb,
        s.edge_embodied_allocation
    from edge
    inner join s using (scenario_id)
),

carbon as (
    select
        counted.*,
        coalesce(stated_devices, devices_formula) as devices_per_gpu,
        case when stated_devices is null then 'formula' else 'stated' end as devices_from,
        coalesce(stated_devices, devices_formula) * train_power_w * edge_hours_per_day * 365 * horizon_years
            * edge_grid_gco2e_per_kwh / 1e6 as edge_operational_kgco2e,
        coalesce(stated_devices, devices_formula) * edge_embodied_allocation * lifecycle_edge.device_embodied_kgco2e
            as edge_embodied_kgco2e,
        coalesce(stated_devices, devices_formula) * (
            wifi_radio_power_w * edge_hours_per_day * 365 * horizon_years * link_utilisation / 1000
            + edge_bandwidth_mb_per_s * 3600 * edge_hours_per_day * 365 * horizon_years * link_utilisation / 1000
                * network_kwh_per_gb
        ) * edge_grid_gco2e_per_kwh / 1000 as comm_kgco2e
    from counted
    left join lifecycle_edge using (scenario_id, device_class)
),

final as (
    select
        carbon.scenario_id,
        carbon.device_class,
        carbon.basis,
        carbon.cloud_gpu_tflops,
        carbon.device_tflops,
        carbon.devices_exact,
        carbon.devices_formula,
        carbon.devices_per_gpu,
        carbon.devices_from,
        carbon.edge_operational_kgco2e + carbon.edge_embodied_kgco2e as edge_added_kgco2e,
        carbon.edge_operational_kgco2e,
        carbon.edge_embodied_kgco2e,
        carbon.comm_kgco2e,
        cloud.cloud_total_kgco2e,
        cloud.cloud_total_kgco2e / (carbon.edge_operational_kgco2e + carbon.edge_embodied_kgco2e) as reduction_factor,
        cloud.cloud_total_kgco2e
            / (carbon.edge_operational_kgco2e + carbon.edge_embodied_kgco2e + carbon.comm_kgco2e) as reduction_factor_with_comm,
        -- the training power at which R would fall to 4 (the paper's phone end), all else fixed
        cloud.cloud_total_kgco2e / 4 * 1e6
            / (carbon.devices_per_gpu * carbon.edge_hours_per_day * 365 * carbon.horizon_years * carbon.edge_grid_gco2e_per_kwh)
            as train_power_w_for_r4
    from carbon
    inner join cloud using (scenario_id)
)

select * from final order by scenario_id, device_class, basis
