-- Lifecycle page (paper Fig. 4): embodied and operational kgCO2e per device class, long form
-- for stacking, with each device's total for the label.
with long as (
    select scenario_id, device_class, 'embodied' as part, embodied_kgco2e as kgco2e, total_kgco2e, embodied_rule
    from marts.lifecycle_carbon
    union all
    select scenario_id, device_class, 'operational', operational_kgco2e, total_kgco2e, embodied_rule
    from marts.lifecycle_carbon
)

select scenario_id, device_class, part, kgco2e, total_kgco2e, kgco2e / total_kgco2e as share, embodied_rule
from long
order by scenario_id, device_class, part
