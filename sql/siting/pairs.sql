-- The pairs of marts.siting, and each pair's model inputs: per siting scenario, every pair of a
-- cloud zone and an edge zone of core.zone_intensity, and every cloud zone against the
-- scenario's own edge mix (edge_zone 'mix', core.scenario_zones: the share-weighted mean of its
-- zones' intensities, each in its charging window in the zone's local time; the mix's basis is
-- its coarsest zone's, in the order $bases, and its fetch the newest of its zones'; a mix with a
-- zone left out of core.zone_intensity is not evaluated). variant_id 'cloud>edge'; each side's
-- intensity under the grid parameter the model reads (cloud_grid_gco2e_per_kwh,
-- edge_grid_gco2e_per_kwh).
with mixes as (
    select
        z.scenario_id,
        'mix' as zone,
        string_agg(z.zone || ' ' || cast(z.share as varchar), ', ' order by z.share desc, z.zone) as edge_mix,
        sum(z.share * i.gco2e_per_kwh order by z.zone) as gco2e_per_kwh,
        arg_max(i.intensity_basis, list_position($bases, i.intensity_basis)) as intensity_basis,
        max(i.fetched_at) as fetched_at
    from core.scenario_zones as z
    left join core.zone_intensity as i on i.scenario_id = z.scenario_id and i.side = z.side and i.zone = z.zone
    where z.side = 'edge'
    group by z.scenario_id
    having count(i.zone) = count(*)
),

edges as (
    select scenario_id, zone, cast(null as varchar) as edge_mix, gco2e_per_kwh, intensity_basis, fetched_at
    from core.zone_intensity
    where side = 'edge'
    union all
    select scenario_id, zone, edge_mix, gco2e_per_kwh, intensity_basis, fetched_at
    from mixes
)

select
    cloud.scenario_id,
    cloud.zone || '>' || edge.zone as variant_id,
    cloud.zone as cloud_zone,
    edge.zone as edge_zone,
    edge.edge_mix,
    cloud.gco2e_per_kwh as cloud_grid_gco2e_per_kwh,
    edge.gco2e_per_kwh as edge_grid_gco2e_per_kwh,
    cloud.intensity_basis as cloud_intensity_basis,
    edge.intensity_basis as edge_intensity_basis,
    cloud.year,
    cloud.fetched_at as cloud_fetched_at,
    edge.fetched_at as edge_fetched_at
from core.zone_intensity as cloud
inner join edges as edge on edge.scenario_id = cloud.scenario_id
where cloud.side = 'cloud'
order by cloud.scenario_id, cloud.zone, edge.zone
