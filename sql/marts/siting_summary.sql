-- marts.siting_summary. Grain: scenario x device class x R kind (compute_only, with_comm) x side x zone.
-- Where the answer flips, read from marts.siting (the model's own rows, nothing recomputed).
-- An edge zone's row (and the scenario's edge mix's, zone 'mix'): R against the cloud's
-- intensity is a line (the cloud's operational carbon is linear in it, the edge side does not
-- depend on it), drawn through the pairs with the cleanest and the dirtiest cloud zone; the cloud
-- intensity at which it crosses R = 1 (below it the edge loses) and R = $claim_low (below it the
-- claim's 4x fails). Negative: R is above that level even on a carbon-free cloud grid; null: the
-- line never reaches it. A cloud zone's row: the share of edge zones (the mix is not a zone)
-- where R >= 1 and R >= $claim_low. Both carry the zone's intensity, basis and fetch as
-- marts.siting holds them, how far its hourly series runs (core.zone_intensity), its
-- electricity demand in the scenario year (and its rank among countries) and its share in the
-- scenario's own zones (core.scenario_zones; the mix: 1; null: not named).
with r as (
    select scenario_id, accounting_frame, device_class, 'compute_only' as r_kind, cloud_zone, edge_zone, edge_mix,
        cloud_gco2e_per_kwh, edge_gco2e_per_kwh, cloud_intensity_basis, edge_intensity_basis, cloud_fetched_at, edge_fetched_at,
        reduction_factor as r, year
    from marts.siting
    union all
    select scenario_id, accounting_frame, device_class, 'with_comm' as r_kind, cloud_zone, edge_zone, edge_mix,
        cloud_gco2e_per_kwh, edge_gco2e_per_kwh, cloud_intensity_basis, edge_intensity_basis, cloud_fetched_at, edge_fetched_at,
        reduction_factor_with_comm as r, year
    from marts.siting
),

edge_lines as (
    select
        scenario_id, accounting_frame, device_class, r_kind, 'edge' as side, edge_zone as zone, year,
        count(*) as n_pairs,
        min(r) as r_min,
        max(r) as r_max,
        avg(case when r >= 1 then 1.0 else 0.0 end order by cloud_zone) as share_r_ge_1,
        avg(case when r >= $claim_low then 1.0 else 0.0 end order by cloud_zone) as share_r_ge_4,
        (max(r) - min(r)) / nullif(max(cloud_gco2e_per_kwh) - min(cloud_gco2e_per_kwh), 0) as slope,
        arg_min(r, cloud_gco2e_per_kwh) as r_at_low,
        min(cloud_gco2e_per_kwh) as ci_low,
        edge_mix,
        any_value(edge_gco2e_per_kwh) as zone_gco2e_per_kwh,
        any_value(edge_intensity_basis) as intensity_basis,
        any_value(edge_fetched_at) as fetched_at
    from r
    group by scenario_id, accounting_frame, device_class, r_kind, edge_zone, edge_mix, year
),

cloud_shares as (
    select
        scenario_id, accounting_frame, device_class, r_kind, 'cloud' as side, cloud_zone as zone, year,
        count(*) as n_pairs,
        min(r) as r_min,
        max(r) as r_max,
        avg(case when r >= 1 then 1.0 else 0.0 end order by edge_zone) as share_r_ge_1,
        avg(case when r >= $claim_low then 1.0 else 0.0 end order by edge_zone) as share_r_ge_4,
        cast(null as varchar) as edge_mix,
        any_value(cloud_gco2e_per_kwh) as zone_gco2e_per_kwh,
        any_value(cloud_intensity_basis) as intensity_basis,
        any_value(cloud_fetched_at) as fetched_at
    from r
    where edge_mix is null
    group by scenario_id, accounting_frame, device_class, r_kind, cloud_zone, year
),

lines as (
    select
        *,
        r_at_low - slope * ci_low as r_at_zero_cloud_intensity
    from edge_lines
),

demand as (
    select zone, year, demand_twh,
        rank() over (partition by year order by demand_twh desc, zone) as demand_rank
    from staging.electricity_demand
    where country_iso3 is not null
),

summary as (
    select scenario_id, accounting_frame, device_class, r_kind, side, zone, year, n_pairs, r_min, r_max, share_r_ge_1,
        share_r_ge_4, r_at_zero_cloud_intensity, slope as r_per_cloud_gco2e_per_kwh,
        case when slope > 0 then (1 - r_at_zero_cloud_intensity) / slope end as cloud_gco2e_per_kwh_for_r1,
        case when slope > 0 then ($claim_low - r_at_zero_cloud_intensity) / slope end as cloud_gco2e_per_kwh_for_r4,
        edge_mix, zone_gco2e_per_kwh, intensity_basis, fetched_at
    from lines
    union all
    select scenario_id, accounting_frame, device_class, r_kind, side, zone, year, n_pairs, r_min, r_max, share_r_ge_1,
        share_r_ge_4, null, null, null, null, edge_mix, zone_gco2e_per_kwh, intensity_basis, fetched_at
    from cloud_shares
)

select
    s.*,
    i.data_through,
    d.demand_twh,
    d.demand_rank,
    case when s.edge_mix is not null then 1.0 else z.share end as scenario_share
from summary as s
left join core.zone_intensity as i on i.scenario_id = s.scenario_id and i.side = s.side and i.zone = s.zone
left join demand as d on d.zone = s.zone and d.year = s.year
left join core.scenario_zones as z on z.scenario_id = s.scenario_id and z.side = s.side and z.zone = s.zone
order by s.scenario_id, s.device_class, s.r_kind, s.side, s.zone
