-- marts.charging_windows. Grain: zone x emission scope x window kind.
-- Input: every half-hourly and hourly actual/forecast value of staging.grid_intensity and
-- staging.grid_intensity_live. Per zone, scope and period one value is kept: an actual before a
-- forecast, a live row before a snapshot row, then the newest fetch, then the lowest source id.
-- Values are averaged to UTC hours (time-weighted), then to a 24-value hour-of-day profile
-- (mean over every day of data). Only zone/scope pairs with all 24 hours of the day appear.
-- Windows (all in UTC hours of the day, wrapping past midnight):
--   cleanest  : the $window_hours-hour contiguous window whose profile mean is lowest
--               (ties: the earliest start hour);
--   overnight : the fixed window starting at $overnight_start_hour UTC, same length;
--   all_day   : the 24-hour day (the profile's mean, i.e. the daily mean).
-- Savings are 1 - window mean / reference: against the annual average (time-weighted mean of
-- every hour of the zone's data; a calendar year for the shipped 2023 series) and against the
-- daily mean.
with series as (
    select zone, emission_scope, period_start, period_end, signal, gco2e_per_kwh, source_id, source_file, fetched_at,
        0 as live_rank
    from staging.grid_intensity
    where resolution in ('PT30M', 'PT1H') and signal in ('actual', 'forecast')
    union all
    select zone, emission_scope, period_start, period_end, signal, gco2e_per_kwh, source_id, source_file, fetched_at,
        1 as live_rank
    from staging.grid_intensity_live
    where resolution in ('PT30M', 'PT1H') and signal in ('actual', 'forecast')
),

best as (
    select *
    from series
    qualify row_number() over (
        partition by zone, emission_scope, period_start, period_end
        order by (signal = 'actual') desc, live_rank desc, fetched_at desc, source_id
    ) = 1
),

-- every float aggregate below is ordered, so that its sum is the same whatever DuckDB's threads
-- (the marts of two builds are equal to the last bit)
hourly as (
    select
        zone,
        emission_scope,
        date_trunc('hour', period_start) as hour_start,
        sum(gco2e_per_kwh * epoch(period_end - period_start) order by period_start, period_end)
            / sum(epoch(period_end - period_start) order by period_start, period_end) as gco2e_per_kwh
    from best
    group by zone, emission_scope, date_trunc('hour', period_start)
),

profile as (
    select zone, emission_scope, hour(hour_start) as hour_of_day, avg(gco2e_per_kwh order by hour_start) as gco2e_per_kwh
    from hourly
    group by zone, emission_scope, hour(hour_start)
),

complete as (
    select zone, emission_scope
    from profile
    group by zone, emission_scope
    having count(*) = 24
),

stats as (
    select
        h.zone,
        h.emission_scope,
        avg(h.gco2e_per_kwh order by h.hour_start) as annual_average_gco2e_per_kwh,
        count(*) as n_hours,
        count(distinct cast(h.hour_start as date)) as n_days,
        min(h.hour_start) as first_period_start,
        max(h.hour_start) + interval 1 hour as last_period_end
    from hourly as h
    semi join complete as c using (zone, emission_scope)
    group by h.zone, h.emission_scope
),

daily as (
    select zone, emission_scope, avg(gco2e_per_kwh order by hour_of_day) as daily_mean_gco2e_per_kwh
    from profile
    semi join complete using (zone, emission_scope)
    group by zone, emission_scope
),

signals as (
    select zone, emission_scope, string_agg(distinct signal, '+' order by signal) as signals
    from best
    group by zone, emission_scope
),

-- provenance of a zone: among the sources of the values used, the shipped one with most
-- periods (a live feed only when no shipped value is used), so that a scenario row referencing
-- the zone joins staging.sources whenever it can
dominant as (
    select zone, emission_scope, source_id, source_file
    from (
        select zone, emission_scope, source_id, min(source_file) as source_file, min(live_rank) as live_rank, count(*) as n
        from best
        group by zone, emission_scope, source_id
    )
    qualify row_number() over (partition by zone, emission_scope order by live_rank, n desc, source_id) = 1
),

starts as (
    select range::integer as start_hour
    from range(24)
),

sliding as (
    select c.zone, c.emission_scope, s.start_hour, avg(p.gco2e_per_kwh order by p.hour_of_day) as mean_gco2e_per_kwh
    from complete as c
    cross join starts as s
    inner join profile as p
        on p.zone = c.zone
        and p.emission_scope = c.emission_scope
        and (p.hour_of_day - s.start_hour + 24) % 24 < $window_hours
    group by c.zone, c.emission_scope, s.start_hour
),

cleanest as (
    select zone, emission_scope, 'cleanest' as window_kind, $window_hours as window_hours, start_hour, mean_gco2e_per_kwh
    from sliding
    qualify row_number() over (partition by zone, emission_scope order by mean_gco2e_per_kwh, start_hour) = 1
),

overnight as (
    select zone, emission_scope, 'overnight' as window_kind, $window_hours as window_hours, start_hour, mean_gco2e_per_kwh
    from sliding
    where start_hour = $overnight_start_hour
),

all_day as (
    select zone, emission_scope, 'all_day' as window_kind, 24 as window_hours, 0 as start_hour,
        daily_mean_gco2e_per_kwh as mean_gco2e_per_kwh
    from daily
),

windows as (
    select * from cleanest
    union all
    select * from overnight
    union all
    select * from all_day
)

select
    w.zone || '.' || w.emission_scope || '.' || w.window_kind as window_id,
    w.zone,
    w.emission_scope,
    w.window_kind,
    w.window_hours,
    w.start_hour as window_start_hour_utc,
    (w.start_hour + w.window_hours) % 24 as window_end_hour_utc,
    w.mean_gco2e_per_kwh,
    d.daily_mean_gco2e_per_kwh,
    st.annual_average_gco2e_per_kwh,
    1 - w.mean_gco2e_per_kwh / st.annual_average_gco2e_per_kwh as saving_vs_annual_average,
    1 - w.mean_gco2e_per_kwh / d.daily_mean_gco2e_per_kwh as saving_vs_daily_mean,
    st.n_hours,
    st.n_days,
    st.first_period_start,
    st.last_period_end,
    sg.signals,
    dm.source_id,
    dm.source_file,
    cast(null as bigint) as source_row
from windows as w
inner join daily as d using (zone, emission_scope)
inner join stats as st using (zone, emission_scope)
inner join signals as sg using (zone, emission_scope)
inner join dominant as dm using (zone, emission_scope)
order by w.zone, w.emission_scope, w.window_kind
