-- The zones the Siting heatmap shows, per scenario and side: the $top_n countries with the most
-- electricity demand, plus every zone whose intensity comes from an hourly series (zones only:
-- not the scenario's edge mix).
select distinct scenario_id, side, zone
from marts.siting_summary
where (demand_rank <= $top_n or intensity_basis in ('hourly', 'hourly_shaped')) and edge_mix is null
