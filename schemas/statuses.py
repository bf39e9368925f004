"""The statuses an input row carries: how far its number is from its source (design.md, principles 2 and 22)."""

from __future__ import annotations

PAPER = "paper"
SECONDARY = "secondary"
CALIBRATED = "calibrated"
ASSUMED = "assumed"
MEASURED = "measured"

#: A sourced row's status, strongest first: paper (read at the paper's own text: its section, table or figure named)
#: | secondary (the paper's number read through another document, which the citation names) | primary (a vendor's or
#: operator's own data) | derived (arithmetic on other rows, shown in the reasoning) | calibrated (chosen so that a
#: published output is met; that output can then never count as reproduced) | assumed (no published source).
STATUSES = [PAPER, SECONDARY, "primary", "derived", CALIBRATED, ASSUMED]
#: The statuses of an input no source shows as used: wherever the project lists the inputs that decide a verdict, or
#: counts a figure's unsourced inputs, these count together.
UNSOURCED_STATUSES = [SECONDARY, CALIBRATED, ASSUMED]
#: A row of one of these statuses says in its notes or reasoning how it was reached.
EXPLAINED_STATUSES = ["derived", CALIBRATED, ASSUMED]
#: The vocabulary as a field description says it.
STATUS_TEXT = " | ".join(STATUSES)

#: How a published number fares against its recomputation (marts.paper_reproduction.status): consistent by construction
#: where the recomputation reads an input calibrated to that very number.
REPRODUCTION_STATUSES = ["reproduced", "consistent by construction", "differs", "not reproducible"]
#: How a registered claim fares (marts.claims.status): reproduced (within the tolerance of the central value) | inconclusive
#: (outside that tolerance, but inside the range the inputs' sourced ranges give) | differs | not reproducible.
CLAIM_STATUSES = ["reproduced", "inconclusive", "differs", "not reproducible"]
#: Which side of "train outside the data centre" a registered claim argues (staging.claims.stance): for (edge,
#: federated or decentralised training emits less, or communicates little enough to be practical) | against (the data
#: centre emits less) | neutral (an account or a measurement that argues neither, such as a data centre run's footprint).
FOR, AGAINST, NEUTRAL = "for", "against", "neutral"
STANCES = [FOR, AGAINST, NEUTRAL]
