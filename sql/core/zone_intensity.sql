-- core.zone_intensity. Grain: scenario x side x zone.
-- The carbon intensity each side of a siting scenario (core.scenario_zones: its year, emission
-- scope, signal and each side's daily window in local time) meets in every zone of
-- staging.grid_intensity and staging.grid_intensity_live, in order of preference:
--   hourly         the zone's hourly series in the scenario's scope and year (half-hours averaged
--                  to UTC hours; per period an actual before a forecast, a live row before a
--                  shipped one, then the newest fetch), the mean over the hours whose local hour
--                  of day (the zone's IANA time zone) lies in the side's window;
--   hourly_shaped  an hourly series of another scope, its window mean / mean over every hour of
--                  the year, times the zone's annual mean in the scenario's scope;
--   monthly        the 12 monthly means of the year in the scope, weighted by each month's hours;
--   annual         the annual mean in the scope.
-- A series counts when it covers at least $min_coverage of the year's hours and every hour of
-- the window. A marginal scenario reads the zone's marginal factor only ($marginal_kind, the
-- newest at or before its year): never an average. Aggregates (zones none of whose rows name a
-- country) are not zones. Every float aggregate is ordered, so two builds agree to the last bit.
with sides as (
    select scenario_id, side, min(year) as year, min(emission_scope) as emission_scope, min(signal) as signal,
        min(window_start_local_hour) as window_start, min(window_hours) as window_hours
    from core.scenario_zones
    group by scenario_id, side
),

grid as (
    select zone, zone_name, country_iso3, period_start, period_end, resolution, signal, emission_scope, gco2e_per_kwh,
        source_id, fetched_at, factor_id, marginal_kind, 0 as live_rank
    from staging.grid_intensity
    union all
    select zone, zone_name, country_iso3, period_start, period_end, resolution, signal, emission_scope, gco2e_per_kwh,
        source_id, fetched_at, factor_id, marginal_kind, 1 as live_rank
    from staging.grid_intensity_live
),

zones as (
    select zone, min(zone_name) as zone_name, bool_and(country_iso3 is null) as is_aggregate,
        string_agg(distinct emission_scope || ' ' || signal, ', ' order by emission_scope || ' ' || signal) as has_data,
        min(year(timezone('UTC', period_start))) as first_year, max(year(timezone('UTC', period_start))) as last_year
    from grid
    group by zone
),

wanted_years as (
    select distinct year from sides where signal = 'average'
),

-- one value per zone, scope and sub-hourly or hourly period of a wanted year
series_periods as (
    select grid.*
    from grid
    inner join wanted_years on year(timezone('UTC', grid.period_start)) = wanted_years.year
    where grid.resolution in ('PT30M', 'PT1H') and grid.signal in ('actual', 'forecast')
    qualify row_number() over (
        partition by grid.zone, grid.emission_scope, grid.period_start, grid.period_end
        order by grid.signal = 'actual' desc, grid.live_rank desc, grid.fetched_at desc, grid.source_id
    ) = 1
),

-- UTC hours, time-weighted
utc_hours as (
    select
        p.zone,
        p.emission_scope,
        date_trunc('hour', p.period_start) as hour_start,
        sum(p.gco2e_per_kwh * epoch(p.period_end - p.period_start) order by p.period_start)
            / sum(epoch(p.period_end - p.period_start) order by p.period_start) as gco2e_per_kwh,
        max(p.period_end) as period_end,
        max(p.fetched_at) as fetched_at
    from series_periods as p
    group by p.zone, p.emission_scope, date_trunc('hour', p.period_start)
),

-- each zone's hours of a year by their local hour of day (the zone's IANA time zone): their sum
-- and count, so a window's mean is the sum over its local hours / their count
hours_of_day as (
    select
        h.zone,
        h.emission_scope,
        tz.iana_time_zone,
        year(timezone('UTC', h.hour_start)) as year,
        hour(timezone(tz.iana_time_zone, h.hour_start)) as local_hour,
        sum(h.gco2e_per_kwh order by h.hour_start) as g_sum,
        count(*) as n,
        max(h.period_end) as period_end,
        max(h.fetched_at) as fetched_at
    from utc_hours as h
    inner join staging.zone_timezones as tz on tz.zone = h.zone
    group by all
),

series_sources as (
    select zone, emission_scope, year(timezone('UTC', period_start)) as year,
        string_agg(distinct source_id, ',' order by source_id) as source_ids
    from series_periods
    group by all
),

-- each side's window over each zone's hourly series of each scope
windowed as (
    select
        s.scenario_id, s.side, h.zone, h.emission_scope, h.iana_time_zone, s.window_start, s.window_hours, s.year,
        sum(h.g_sum order by h.local_hour) filter (where (h.local_hour - s.window_start + 24) % 24 < s.window_hours)
            / sum(h.n) filter (where (h.local_hour - s.window_start + 24) % 24 < s.window_hours) as window_mean,
        sum(h.g_sum order by h.local_hour) / sum(h.n) as year_mean,
        sum(h.n) filter (where (h.local_hour - s.window_start + 24) % 24 < s.window_hours) as n_window,
        count(*) filter (where (h.local_hour - s.window_start + 24) % 24 < s.window_hours) as window_hours_seen,
        sum(h.n) as n_year,
        max(h.period_end) as data_through,
        max(h.fetched_at) as fetched_at
    from sides as s
    inner join hours_of_day as h on h.year = s.year
    where s.signal = 'average'
    group by s.scenario_id, s.side, h.zone, h.emission_scope, h.iana_time_zone, s.window_start, s.window_hours, s.year
    having sum(h.n) >= $min_coverage * epoch(make_timestamp(s.year + 1, 1, 1, 0, 0, 0) - make_timestamp(s.year, 1, 1, 0, 0, 0)) / 3600
        and count(*) filter (where (h.local_hour - s.window_start + 24) % 24 < s.window_hours) = s.window_hours
),

annual as (
    select zone, year(timezone('UTC', period_start)) as year, emission_scope, gco2e_per_kwh, fetched_at, source_id
    from grid
    where signal = 'annual_average' and resolution = 'P1Y'
    qualify row_number() over (partition by zone, year(timezone('UTC', period_start)), emission_scope
                               order by live_rank desc, fetched_at desc, source_id) = 1
),

monthly as (
    select
        zone, year(timezone('UTC', period_start)) as year, emission_scope,
        sum(gco2e_per_kwh * epoch(period_end - period_start) order by period_start)
            / sum(epoch(period_end - period_start) order by period_start) as gco2e_per_kwh,
        max(fetched_at) as fetched_at,
        string_agg(distinct source_id, ',' order by source_id) as source_ids
    from grid
    where signal = 'monthly_average' and resolution = 'P1M'
    group by zone, year(timezone('UTC', period_start)), emission_scope
    having count(distinct month(timezone('UTC', period_start))) = 12 and count(*) = 12
),

marginal as (
    select
        s.scenario_id, s.side, g.zone, g.gco2e_per_kwh, year(timezone('UTC', g.period_start)) as year, g.emission_scope,
        g.fetched_at, g.source_id, g.factor_id
    from sides as s
    inner join grid as g
        on g.signal = 'marginal' and g.resolution = 'P1Y' and g.marginal_kind = $marginal_kind
        and year(timezone('UTC', g.period_start)) <= s.year
    where s.signal = 'marginal'
    qualify row_number() over (partition by s.scenario_id, s.side, g.zone
                               order by g.period_start desc, g.live_rank desc, g.fetched_at desc, g.factor_id) = 1
),

candidates as (
    -- hourly: a series in the scenario's scope
    select w.scenario_id, w.side, w.zone, 1 as preference, 'hourly' as intensity_basis, w.window_mean as gco2e_per_kwh,
        w.year, 'actual' as signal, w.emission_scope, w.year_mean as annual_gco2e_per_kwh, cast(null as double) as shape_factor,
        cast(null as varchar) as shape_scope, w.n_window as n_hours, w.data_through, w.fetched_at, src.source_ids,
        cast(null as varchar) as factor_id
    from windowed as w
    inner join sides as s on s.scenario_id = w.scenario_id and s.side = w.side and s.emission_scope = w.emission_scope
    inner join series_sources as src on src.zone = w.zone and src.emission_scope = w.emission_scope and src.year = w.year
    union all
    -- hourly_shaped: another scope's shape on the annual mean of the scenario's scope
    select w.scenario_id, w.side, w.zone, 2, 'hourly_shaped', a.gco2e_per_kwh * (w.window_mean / w.year_mean),
        w.year, 'actual', s.emission_scope, a.gco2e_per_kwh, w.window_mean / w.year_mean, w.emission_scope, w.n_window,
        w.data_through, greatest(w.fetched_at, a.fetched_at), a.source_id || ',' || src.source_ids, null
    from windowed as w
    inner join sides as s on s.scenario_id = w.scenario_id and s.side = w.side and s.emission_scope <> w.emission_scope
    inner join series_sources as src on src.zone = w.zone and src.emission_scope = w.emission_scope and src.year = w.year
    inner join annual as a on a.zone = w.zone and a.year = w.year and a.emission_scope = s.emission_scope
    union all
    select s.scenario_id, s.side, m.zone, 3, 'monthly', m.gco2e_per_kwh, m.year, 'monthly_average', m.emission_scope,
        m.gco2e_per_kwh, null, null, null, null, m.fetched_at, m.source_ids, null
    from sides as s
    inner join monthly as m on m.year = s.year and m.emission_scope = s.emission_scope
    where s.signal = 'average'
    union all
    select s.scenario_id, s.side, a.zone, 4, 'annual', a.gco2e_per_kwh, a.year, 'annual_average', a.emission_scope,
        a.gco2e_per_kwh, null, null, null, null, a.fetched_at, a.source_id, null
    from sides as s
    inner join annual as a on a.year = s.year and a.emission_scope = s.emission_scope
    where s.signal = 'average'
    union all
    select scenario_id, side, zone, 5, 'annual', gco2e_per_kwh, year, 'marginal', emission_scope, gco2e_per_kwh, null, null, null,
        null, fetched_at, source_id, factor_id
    from marginal
),

chosen as (
    select c.*
    from candidates as c
    inner join zones as z on z.zone = c.zone and not z.is_aggregate
    -- a window shorter than the day needs the zone's local clock
    left join staging.zone_timezones as tz on tz.zone = c.zone
    inner join sides as s on s.scenario_id = c.scenario_id and s.side = c.side
    where tz.zone is not null or s.window_hours = 24
    qualify row_number() over (partition by c.scenario_id, c.side, c.zone order by c.preference, c.shape_scope) = 1
)

select
    c.scenario_id,
    c.side,
    c.zone,
    z.zone_name,
    coalesce(tz.iana_time_zone, 'UTC') as iana_time_zone,
    s.window_start as window_start_local_hour,
    s.window_hours,
    c.gco2e_per_kwh,
    c.intensity_basis,
    s.year,
    c.year as data_year,
    c.signal,
    c.emission_scope,
    c.annual_gco2e_per_kwh,
    c.shape_factor,
    c.shape_scope,
    c.n_hours,
    c.data_through,
    c.fetched_at,
    c.source_ids,
    c.factor_id
from chosen as c
inner join zones as z on z.zone = c.zone
inner join sides as s on s.scenario_id = c.scenario_id and s.side = c.side
left join staging.zone_timezones as tz on tz.zone = c.zone
order by c.scenario_id, c.side, c.zone
