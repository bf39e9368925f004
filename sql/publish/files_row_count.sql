-- The rows of some Parquet files, read from their footers.
select count(*) from read_parquet($files, hive_partitioning = false);
