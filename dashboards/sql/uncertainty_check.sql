-- Uncertainty page: does marts.uncertainty exist in this warehouse?
select count(*) > 0 as present
from information_schema.tables
where table_schema = 'marts' and table_name = 'uncertainty'
