-- Landed payload ids (from the spool) that raw.carbon_intensity_payloads does not hold yet.
select s.payload_id
from _spool_ids as s
anti join raw.carbon_intensity_payloads as r using (payload_id)
