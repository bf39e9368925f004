-- The claim's bounds, as marts.verdict states them on every row (its scenario's claim: a row of core.claim,
-- Xue et al.'s 4-8x for every shipped scenario).
select max(claim_low) as claim_low, max(claim_high) as claim_high
from marts.verdict
