-- Every page: the claim the verdict judges (marts.verdict's claim_id, the one its scenarios test), with the input rows
-- it rests on by status (marts.claims).
select claims.*
from marts.claims as claims
where claims.claim_id in (select claim_id from marts.verdict)
order by claims.claim_id
limit 1
