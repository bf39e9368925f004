-- Newest period in staging.grid_intensity_live per source and zone.
select source_id, zone, max(period_end) as newest_period_end, count(*) as periods
from staging.grid_intensity_live
group by source_id, zone
order by source_id, zone
