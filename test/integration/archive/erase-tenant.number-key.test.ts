// eraseTenant on a table whose partition key is a number: the records of one tenant were archived
// carrying its key in different spellings (DynamoDB Local's MODIFY keeps the request's `1.50`).
import { describe, expect, it } from 'vitest';
import { parseArchiveKey } from '../../../src/archive/format.js';
import { tenantFromPartitionKey } from '../../../src/archive/partition.js';
import { eraseTenant } from '../../../src/archive.js';
import { parseStreamEvent } from '../../../src/records/index.js';
import { canonicalNumberText } from '../../../src/records/number-canonical.js';
import type { ClassifiedRecord } from '../../../src/records/types.js';
import { S3ArchiveSink } from '../../../src/s3.js';
import { sampleTtlDeleteRecords } from '../../../src/sinks/sample-records.js';
import { createTestBucket, localClients } from '../../support/aws.js';
import { HOUR, HOUR_10, HOUR_11, rawRows, readBack, snapshot, TABLE } from './helpers.js';

const PREFIX = 'archive';
const partitionBy = tenantFromPartitionKey();
const BIG = '12345678901234567890123456789012345678';
/** Each tenant's spellings, taken in turn by its records. */
const SPELLINGS: readonly (readonly string[])[] = [
  ['1.5', '1.50', '15E-1', '0.15e1'],
  [BIG, '1.2345678901234567890123456789012345678E37', '123456789012345678901234567890123456780e-1'],
  ['2', '2.0', '20E-1'],
  ['-3.25', '-325e-2', '-0.0325E2'],
];

/** `count` TTL deletes from `firstTime`, record i of tenant i % 4 keyed by one of its spellings. */
function numberKeyed(count: number, start: number, firstTime: number): ClassifiedRecord[] {
  const raw = sampleTtlDeleteRecords(count, { start, firstTime, spacingSeconds: 30 }).map((record, n) => {
    const i = start + n;
    const spellings = SPELLINGS[i % SPELLINGS.length] as readonly string[];
    const pk = { N: spellings[Math.floor(i / SPELLINGS.length) % spellings.length] as string };
    const d = record.dynamodb;
    return { ...record, dynamodb: { ...d, Keys: { ...d.Keys, pk }, OldImage: { ...d.OldImage, pk } } };
  });
  return parseStreamEvent({ Records: raw });
}

const pkValue = (r: ClassifiedRecord) => canonicalNumberText(r.raw.dynamodb.Keys.pk?.N as string);

describe('eraseTenant with a number partition key', () => {
  it("erases every row of tenant 1.5 whichever spelling it was archived in, and touches no other tenant's row", async () => {
    const { s3 } = localClients();
    const bucket = await createTestBucket(s3);
    // Hour 10 written partitioned (one object per tenant a batch), hour 11 before partitioning
    // (mixed objects, rewritten without the tenant's rows).
    const partitioned = numberKeyed(48, 0, HOUR_10 / 1000);
    const unpartitioned = numberKeyed(48, 48, HOUR_11 / 1000);
    const tenantSink = new S3ArchiveSink({ client: s3, bucket, prefix: PREFIX, partitionBy });
    const plainSink = new S3ArchiveSink({ client: s3, bucket, prefix: PREFIX });
    for (let i = 0; i < 48; i += 16) {
      expect(await tenantSink.write(partitioned.slice(i, i + 16), {})).toEqual({});
      expect(await plainSink.write(unpartitioned.slice(i, i + 16), {})).toEqual({});
    }
    // Every spelling of 1.5 was archived, in both hours.
    const archived = rawRows(await snapshot(s3, bucket)).map((row) => row.keys.pk?.N);
    for (const spelling of SPELLINGS[0] as readonly string[]) expect(archived).toContain(spelling);
    // The partitioned objects name each tenant by its canonical text: four tenants, not thirteen.
    const segments = new Set(
      [...(await snapshot(s3, bucket))].map(([key]) => parseArchiveKey(key)?.tenant).filter(Boolean),
    );
    expect([...segments].sort()).toEqual(['-3.25', '1.5', '12345678901234567890123456789012345678', '2']);

    const everything = await readBack(s3, bucket, { prefix: PREFIX });
    expect(everything).toHaveLength(96);
    const report = await eraseTenant({
      client: s3,
      bucket,
      table: TABLE,
      prefix: PREFIX,
      from: HOUR_10,
      to: HOUR_11 + HOUR,
      tenant: '1.5',
      partitionBy,
    });
    expect(report.rowsErased).toBe(24);

    const rest = await readBack(s3, bucket, { prefix: PREFIX });
    expect(rest.map((r) => r.raw)).toEqual(everything.filter((r) => pkValue(r) !== '1.5').map((r) => r.raw));
    expect(await readBack(s3, bucket, { prefix: PREFIX, tenant: '1.5', partitionBy })).toEqual([]);
    // The 38-digit tenant, spelt three ways, is whole.
    expect(rest.filter((r) => pkValue(r) === BIG)).toHaveLength(24);
  });
});
