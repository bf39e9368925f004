-- core.zone_exclusions. Grain: scenario x side x zone.
-- Every zone of staging.grid_intensity and staging.grid_intensity_live without a row in
-- core.zone_intensity for a scenario's side, with the reason, checked in this order: an
-- aggregate (no row names a country); a marginal scenario and no annual marginal factor of the
-- kind it reads ($marginal_kind; never an average, nor another margin, instead); no row in the scenario's scope and year, naming what the zone has; a
-- window shorter than the day and no time zone (staging.zone_timezones); else too little of the
-- year (an hourly series short of the coverage, monthly means short of 12).
with sides as (
    select scenario_id, side, min(year) as year, min(emission_scope) as emission_scope, min(signal) as signal,
        min(window_hours) as window_hours
    from core.scenario_zones
    group by scenario_id, side
),

rows as (
    select zone, country_iso3, signal, emission_scope, resolution, marginal_kind, year(timezone('UTC', period_start)) as year
    from staging.grid_intensity
    union all
    select zone, country_iso3, signal, emission_scope, resolution, marginal_kind, year(timezone('UTC', period_start)) as year
    from staging.grid_intensity_live
),

zones as (
    select
        zone,
        bool_and(country_iso3 is null) as is_aggregate,
        bool_or(signal = 'marginal' and resolution = 'P1Y' and marginal_kind = $marginal_kind) as has_marginal,
        string_agg(distinct emission_scope || ' ' || signal || ' ' || resolution, ', '
                   order by emission_scope || ' ' || signal || ' ' || resolution) as has_data,
        min(year) as first_year,
        max(year) as last_year
    from rows
    group by zone
),

in_scope as (
    select distinct zone, emission_scope, year
    from rows
),

missing as (
    select s.*, z.*
    from sides as s
    cross join zones as z
    anti join core.zone_intensity as i on i.scenario_id = s.scenario_id and i.side = s.side and i.zone = z.zone
)

select
    m.scenario_id,
    m.side,
    m.zone,
    case
        when m.is_aggregate then 'aggregate'
        when m.signal = 'marginal' and not m.has_marginal then 'no_marginal_factor'
        when d.zone is null then 'no_data_in_scope'
        when m.window_hours < 24 and tz.zone is null then 'no_time_zone'
        else 'no_data_in_scope'
    end as reason_code,
    case
        when m.is_aggregate then 'an aggregate of several countries (no row names a country), not a zone'
        when m.signal = 'marginal' and not m.has_marginal then
            'no ' || $marginal_kind || ' marginal factor (signal = marginal); the consequential frame never falls back to the average ('
            || m.has_data || ')'
        when d.zone is null then 'no ' || m.emission_scope || ' data for ' || m.year || ' (the zone has ' || m.has_data
            || ', ' || m.first_year || '-' || m.last_year || ')'
        when m.window_hours < 24 and tz.zone is null then
            'no IANA time zone in staging.zone_timezones for its charging window in local time'
        else 'its ' || m.emission_scope || ' data for ' || m.year || ' cover too little of the year (the zone has '
            || m.has_data || ', ' || m.first_year || '-' || m.last_year || ')'
    end as reason
from missing as m
left join staging.zone_timezones as tz on tz.zone = m.zone
left join in_scope as d on d.zone = m.zone and d.emission_scope = m.emission_scope and d.year = m.year
order by m.scenario_id, m.side, m.zone
