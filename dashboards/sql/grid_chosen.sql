-- Grid pages: the sub-daily (hourly or half-hourly) actual series, one emission scope per zone:
-- lifecycle where the zone has it, else direct. Included by grid_daily.sql and grid_profile.sql.
with sub_daily as (
    select zone, emission_scope, period_start, gco2e_per_kwh
    from staging.grid_intensity
    where signal = 'actual' and resolution in ('PT1H', 'PT30M')
),

scope as (
    select zone, min(emission_scope) filter (where emission_scope = 'lifecycle') as lifecycle_scope,
        min(emission_scope) as any_scope
    from sub_daily
    group by zone
)

select sub_daily.*
from sub_daily
inner join scope using (zone)
where sub_daily.emission_scope = coalesce(scope.lifecycle_scope, scope.any_scope)
