-- The claim's bounds (core.claim), as marts.verdict states them on every row.
select max(claim_low) as claim_low, max(claim_high) as claim_high
from marts.verdict
