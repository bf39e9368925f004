-- Quarantined input rows (distinct file rows, not failed checks) per staging table and source, and
-- whether the source is a shipped one: listed in staging.sources from a manifest other than
-- $local_manifest, where `edge-carbon register` and `edge-carbon scenario new` write the user's own
-- sources. A shipped source's file is pinned by its sha256, so every build rejects the same rows of
-- it, for the reasons its manifest notes give; a source that staging.sources does not list counts
-- as not shipped.
select
    r.table_name,
    r.source_id,
    coalesce(bool_or(s.manifest_file <> $local_manifest), false) as shipped,
    count(distinct r.source_file || ':' || coalesce(r.source_row, -1)) as rejected_rows
from quarantine.rejected_rows as r
left join staging.sources as s using (source_id)
group by r.table_name, r.source_id
order by r.table_name, r.source_id
