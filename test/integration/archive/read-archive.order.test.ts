import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { tenantFromPartitionKey } from '../../../src/archive/partition.js';
import { readArchiveRows } from '../../../src/archive.js';
import { S3ArchiveSink } from '../../../src/s3.js';
import { sampleChanges } from '../../../src/sinks/sample-records.js';
import { createTestBucket, localClients } from '../../support/aws.js';

// Each item's changes in the order they happened, whatever objects hold them: an item's rows sit in
// its tenant's objects and, for batches over maxPartitionsPerBatch, in unpartitioned ones.

const WIDE = { table: 'archive-sample', from: '2026-01-01T00:00:00Z', to: '2026-02-01T00:00:00Z' };
const changes = sampleChanges(90, {
  tenants: ['acme', 'globex', 'initech'],
  liveItems: 6,
  spacingSeconds: 30,
});
const itemOf = (keys: { pk?: { S?: string } }) => String(keys.pk?.S);

function perItem(rows: readonly { keys: { pk?: { S?: string } }; eventID: string }[]) {
  const out = new Map<string, string[]>();
  for (const row of rows) out.set(itemOf(row.keys), [...(out.get(itemOf(row.keys)) ?? []), row.eventID]);
  return [...out].sort(([a], [b]) => (a < b ? -1 : 1));
}

describe('readArchiveRows order', () => {
  const { s3 } = localClients();

  it('gives each item its changes in stream order across tenant and unpartitioned objects and redeliveries', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(fc.nat(89), fc.integer({ min: 1, max: 30 })), { minLength: 1, maxLength: 4 }),
        fc.integer({ min: 1, max: 3 }),
        async (redeliveries, maxPartitionsPerBatch) => {
          const bucket = await createTestBucket(s3);
          const sink = new S3ArchiveSink({
            client: s3,
            bucket,
            prefix: 'changes',
            partitionBy: tenantFromPartitionKey(),
            maxPartitionsPerBatch,
          });
          for (let i = 0; i < changes.length; i += 15)
            expect(await sink.write(changes.slice(i, i + 15), {})).toEqual({});
          for (const [start, length] of redeliveries)
            expect(await sink.write(changes.slice(start, start + length), {})).toEqual({});
          const rows = [];
          for await (const row of readArchiveRows({ client: s3, bucket, prefix: 'changes', ...WIDE }))
            rows.push(row);
          expect(rows.map((r) => r.eventID).sort()).toEqual(changes.map((r) => r.eventID).sort());
          expect(perItem(rows)).toEqual(
            perItem(changes.map((r) => ({ keys: r.raw.dynamodb.Keys, eventID: r.eventID }))),
          );
        },
      ),
      { numRuns: 8 },
    );
  }, 120_000);
});
