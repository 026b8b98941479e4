// The de-duplicating views of the NDJSON tables (infra/query.yml saves each as an Athena query;
// docs/query.md shows the TTL archive's, and test/unit/deploy/query-tables.test.ts keeps the two
// equal). A redelivery cut at another point leaves overlapping objects, and Kinesis may carry one
// change twice under two sequence numbers: a change is its eventID either way, and its copies
// always share its hour (the hour is its ApproximateCreationDateTime's), so the window is
// partitioned by the partition columns too and filters on them reach the table (projection prunes).
'use strict';

/** The view over `table` (ttl_archive, user_delete_archive or change_archive). */
function dedupView(table) {
  return `CREATE OR REPLACE VIEW ${table}_dedup AS
SELECT event_id, sequence_number, shard, event_name, kind, approximate_creation_date_time,
       table_name, tenant_id, keys, old_image, new_image, ttl_attribute, ttl_text,
       event_source_arn, aws_region, user_identity, size_bytes, stream_view_type,
       event_version, event_source, kinesis, "table", dt, hour
FROM (
  SELECT t.*, row_number() OVER (PARTITION BY "table", dt, hour, event_id) AS copy_number
  FROM ${table} t
)
WHERE copy_number = 1;`;
}

module.exports = {
  dedupView,
  ttl_archive: dedupView('ttl_archive'),
  user_delete_archive: dedupView('user_delete_archive'),
  change_archive: dedupView('change_archive'),
};
