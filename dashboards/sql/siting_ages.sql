-- How old each hourly intensity is: the end of the newest hour read and when it was fetched.
select distinct zone, intensity_basis, data_through, fetched_at
from marts.siting_summary
where intensity_basis in ('hourly', 'hourly_shaped') and edge_mix is null
order by zone
