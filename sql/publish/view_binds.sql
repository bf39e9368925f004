-- A lake view bound (every file it names must be there) without reading a row.
select count(*) from (select * from query_table($table) limit 0);
