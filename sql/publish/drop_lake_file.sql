-- A current catalog row whose file is gone, superseded now: its view stops naming the file.
update meta.lake_files
set superseded_at = $now
where table_name = $table and file = $file and superseded_at is null;
