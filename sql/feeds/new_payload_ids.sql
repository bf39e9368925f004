-- Landed payload ids ($spooled: the ids in the spool) that raw.carbon_intensity_payloads does not hold yet.
select s.payload_id
from (select unnest($spooled::varchar[]) as payload_id) as s
anti join raw.carbon_intensity_payloads as r using (payload_id)
