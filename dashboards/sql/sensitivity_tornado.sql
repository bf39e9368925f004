-- Sensitivity tornado: one-at-a-time low/high of every parameter that has a range in
-- core.scenario_parameters and enters the closed-form reduction factor R (without
-- communication), all other parameters at the scenario's value. Same formulas as
-- marts.lifecycle_carbon and marts.fleet_equivalence:
--   cloud total = GPU embodied + P_gpu x utilisation x h_gpu x 365 x T x PUE x CI_cloud / 1e6
--   N = the scenario's stated count, else ceil(F_gpu x h_gpu / (F_dev x h_dev))
--   device embodied = report total x non-use share x min(T / lifetime, 1)
--   edge added = N x P_dev x h_dev x 365 x T x CI_edge / 1e6 + N x allocation x device embodied
--   R = cloud total / edge added
-- A parameter whose range does not move R (e.g. a non-use share while the allocation is 0)
-- gets a zero-width bar. Communication parameters are not varied here (they only move R with
-- communication). Parameters: $basis (the label of the equivalence basis, peak FLOPS).
with s as (
    select * from core.scenarios
),

varied_parameters as (
    select scenario_id, parameter, low, high
    from core.scenario_parameters
    where low is not null and high is not null
      and parameter in (
          'horizon_years', 'edge_hours_per_day', 'cloud_hours_per_day', 'cloud_gpu_power_w',
          'cloud_utilisation', 'cloud_pue', 'cloud_gpu_embodied_kgco2e', 'cloud_grid_gco2e_per_kwh',
          'edge_grid_gco2e_per_kwh', 'cloud_gpu_tflops', 'laptop_tflops', 'phone_tflops',
          'laptop_train_power_w', 'phone_train_power_w', 'laptop_embodied_kgco2e', 'phone_embodied_kgco2e',
          'laptop_nonuse_share', 'phone_nonuse_share', 'laptop_lifetime_years', 'phone_lifetime_years',
          'edge_embodied_allocation'
      )
),

settings as (
    select scenario_id, 'baseline' as parameter, 'baseline' as side, cast(null as double) as value
    from s
    union all
    select scenario_id, parameter, 'low', low from varied_parameters
    union all
    select scenario_id, parameter, 'high', high from varied_parameters
),

p as (
    select
        settings.scenario_id,
        settings.parameter,
        settings.side,
        settings.value,
        case when settings.parameter = 'horizon_years' then settings.value else s.horizon_years end as horizon_years,
        case when settings.parameter = 'edge_hours_per_day' then settings.value else s.edge_hours_per_day end as edge_hours_per_day,
        case when settings.parameter = 'cloud_hours_per_day' then settings.value else s.cloud_hours_per_day end as cloud_hours_per_day,
        case when settings.parameter = 'cloud_gpu_power_w' then settings.value else s.cloud_gpu_power_w end as cloud_gpu_power_w,
        case when settings.parameter = 'cloud_utilisation' then settings.value else s.cloud_utilisation end as cloud_utilisation,
        case when settings.parameter = 'cloud_pue' then settings.value else s.cloud_pue end as cloud_pue,
        case when settings.parameter = 'cloud_gpu_embodied_kgco2e' then settings.value else s.cloud_gpu_embodied_kgco2e end as cloud_gpu_embodied_kgco2e,
        case when settings.parameter = 'cloud_grid_gco2e_per_kwh' then settings.value else s.cloud_grid_gco2e_per_kwh end as cloud_grid_gco2e_per_kwh,
        case when settings.parameter = 'edge_grid_gco2e_per_kwh' then settings.value else s.edge_grid_gco2e_per_kwh end as edge_grid_gco2e_per_kwh,
        case when settings.parameter = 'cloud_gpu_tflops' then settings.value else s.cloud_gpu_tflops end as cloud_gpu_tflops,
        case when settings.parameter = 'laptop_tflops' then settings.value else s.laptop_tflops end as laptop_tflops,
        case when settings.parameter = 'phone_tflops' then settings.value else s.phone_tflops end as phone_tflops,
        case when settings.parameter = 'laptop_train_power_w' then settings.value else s.laptop_train_power_w end as laptop_train_power_w,
        case when settings.parameter = 'phone_train_power_w' then settings.value else s.phone_train_power_w end as phone_train_power_w,
        case when settings.parameter = 'laptop_embodied_kgco2e' then settings.value else s.laptop_embodied_kgco2e end as laptop_embodied_kgco2e,
        case when settings.parameter = 'phone_embodied_kgco2e' then settings.value else s.phone_embodied_kgco2e end as phone_embodied_kgco2e,
        case when settings.parameter = 'laptop_nonuse_share' then settings.value else s.laptop_nonuse_share end as laptop_nonuse_share,
        case when settings.parameter = 'phone_nonuse_share' then settings.value else s.phone_nonuse_share end as phone_nonuse_share,
        case when settings.parameter = 'laptop_lifetime_years' then settings.value else s.laptop_lifetime_years end as laptop_lifetime_years,
        case when settings.parameter = 'phone_lifetime_years' then settings.value else s.phone_lifetime_years end as phone_lifetime_years,
        case when settings.parameter = 'edge_embodied_allocation' then settings.value else s.edge_embodied_allocation end as edge_embodied_allocation,
        s.laptop_devices_per_gpu,
        s.phone_devices_per_gpu
    from settings
    inner join s using (scenario_id)
),

edge as (
    select
        p.*,
        'laptop' as device_class,
        laptop_tflops as device_tflops,
        laptop_train_power_w as train_power_w,
        laptop_devices_per_gpu as stated_devices,
        laptop_embodied_kgco2e * laptop_nonuse_share * least(horizon_years / laptop_lifetime_years, 1) as device_embodied_kgco2e
    from p
    union all
    select
        p.*,
        'phone',
        phone_tflops,
        phone_train_power_w,
        phone_devices_per_gpu,
        phone_embodied_kgco2e * phone_nonuse_share * least(horizon_years / phone_lifetime_years, 1)
    from p
),

evaluated as (
    select
        scenario_id,
        device_class,
        parameter,
        side,
        value,
        cloud_gpu_embodied_kgco2e
            + cloud_gpu_power_w * cloud_utilisation * cloud_hours_per_day * 365 * horizon_years * cloud_pue
              * cloud_grid_gco2e_per_kwh / 1e6 as cloud_total_kgco2e,
        coalesce(stated_devices,
                 ceil((cloud_gpu_tflops * cloud_hours_per_day) / (device_tflops * edge_hours_per_day) - 1e-9)) as devices,
        train_power_w,
        edge_hours_per_day,
        horizon_years,
        edge_grid_gco2e_per_kwh,
        edge_embodied_allocation,
        device_embodied_kgco2e
    from edge
),

r as (
    select
        scenario_id,
        device_class,
        parameter,
        side,
        value,
        cloud_total_kgco2e / (
            devices * train_power_w * edge_hours_per_day * 365 * horizon_years * edge_grid_gco2e_per_kwh / 1e6
            + devices * edge_embodied_allocation * device_embodied_kgco2e
        ) as reduction_factor
    from evaluated
),

baseline as (
    select scenario_id, device_class, reduction_factor as baseline_reduction_factor
    from r
    where side = 'baseline'
)

select
    lo.scenario_id,
    lo.device_class,
    $basis as basis,
    lo.parameter,
    lo.value as value_low,
    hi.value as value_high,
    lo.reduction_factor as reduction_factor_at_low,
    hi.reduction_factor as reduction_factor_at_high,
    least(lo.reduction_factor, hi.reduction_factor) as reduction_factor_min,
    greatest(lo.reduction_factor, hi.reduction_factor) as reduction_factor_max,
    abs(hi.reduction_factor - lo.reduction_factor) as swing,
    baseline.baseline_reduction_factor
from r as lo
inner join r as hi using (scenario_id, device_class, parameter)
inner join baseline using (scenario_id, device_class)
where lo.side = 'low' and hi.side = 'high'
    -- a laptop parameter cannot move the phone's R and vice versa
    and not (lo.parameter like 'laptop\_%' escape '\' and lo.device_class = 'phone')
    and not (lo.parameter like 'phone\_%' escape '\' and lo.device_class = 'laptop')
order by lo.scenario_id, lo.device_class, swing desc, lo.parameter
