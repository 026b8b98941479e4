// Archive maintenance as a user runs it, from the installed package: an archive partitioned by
// tenant, a redelivery that left an hour with duplicate rows, compaction, and one tenant erased.
import { parseStreamEvent, tenantFromPartitionKey } from 'tidewater';
import { compactArchive, eraseTenant, readArchive } from 'tidewater/archive';
import { useLocalAws } from 'tidewater/local/vitest';
import { S3ArchiveSink } from 'tidewater/s3';
import { streamEvents } from 'tidewater/testing';
import { expect, it } from 'vitest';

const BUCKET = 'maintained-archive';
const local = useLocalAws({ buckets: [BUCKET] });

it('partitions by tenant, compacts a redelivered hour, and erases one tenant', async () => {
  const { s3 } = local.current;
  // Every record of the builder is deleted at 2026-01-01T00:00Z: an hour long closed.
  const events = streamEvents({ tableName: 'orders', keyAttributes: ['pk', 'sk'] });
  const expired = Array.from({ length: 30 }, (_, i) =>
    events.ttlDelete({ pk: `${i % 2 === 0 ? 'globex' : 'acme'}#order#${i}`, sk: 'v1', total: i }),
  );
  const records = parseStreamEvent(events.event(...expired));
  const sink = new S3ArchiveSink({
    client: s3,
    bucket: BUCKET,
    prefix: 'archive',
    partitionBy: tenantFromPartitionKey(),
  });
  expect(await sink.write(records.slice(0, 20), {})).toEqual({});
  expect(await sink.write(records.slice(10, 30), {})).toEqual({}); // a redelivery cut elsewhere

  const hour = {
    client: s3,
    bucket: BUCKET,
    prefix: 'archive',
    table: 'orders',
    from: '2026-01-01T00:00Z',
    to: '2026-01-01T01:00Z',
  };
  const compacted = await compactArchive(hour);
  expect(compacted.hours[0]).toMatchObject({ status: 'compacted', duplicates: 10, rowsWritten: 30 });

  const erased = await eraseTenant({ ...hour, tenant: 'globex' });
  expect(erased.rowsErased).toBe(15);
  const left: unknown[] = [];
  for await (const record of readArchive(hour)) left.push(record.keys.pk);
  expect(left).toHaveLength(15);
  expect(left.every((pk) => String(pk).startsWith('acme#'))).toBe(true);
});
