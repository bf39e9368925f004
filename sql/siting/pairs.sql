-- The model inputs of marts.siting: per siting scenario, every pair of a cloud zone and an edge
-- zone of core.zone_intensity (variant_id 'cloud>edge'), each side's intensity in the grid
-- parameters the model reads (cloud_grid_gco2e_per_kwh, edge_grid_gco2e_per_kwh).
select
    cloud.scenario_id,
    cloud.zone || '>' || edge.zone as variant_id,
    cloud.zone as cloud_zone,
    edge.zone as edge_zone,
    cloud.gco2e_per_kwh as cloud_grid_gco2e_per_kwh,
    edge.gco2e_per_kwh as edge_grid_gco2e_per_kwh
from core.zone_intensity as cloud
inner join core.zone_intensity as edge on edge.scenario_id = cloud.scenario_id and edge.side = 'edge'
where cloud.side = 'cloud'
order by cloud.scenario_id, cloud.zone, edge.zone
