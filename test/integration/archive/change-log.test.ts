import {
  type AttributeValue,
  DeleteItemCommand,
  PutItemCommand,
  UpdateItemCommand,
} from '@aws-sdk/client-dynamodb';
import { describe, expect, it } from 'vitest';
import type { ArchiveRow } from '../../../src/archive/format.js';
import { tenantFromPartitionKey } from '../../../src/archive/partition.js';
import { compactArchive, eraseTenant, readArchive, readArchiveRows } from '../../../src/archive.js';
import { createStreamHandler, RECORD_KINDS, route } from '../../../src/index.js';
import { createLambdaContext } from '../../../src/lambda/context.js';
import { toLambdaRecord } from '../../../src/records/index.js';
import type { LambdaStreamRecord } from '../../../src/records/types.js';
import { S3ArchiveSink } from '../../../src/s3.js';
import {
  createTestBucket,
  createTestTable,
  enableTtl,
  localClients,
  readStreamUntil,
} from '../../support/aws.js';
import { duplicateRows, rawRows, snapshot } from './helpers.js';

// The change log of docs/archive.md: a route taking every kind of record into its own archive,
// fed by DynamoDB Local's real stream (puts, updates, deletes and its own TTL sweep) of a
// multi-tenant table, delivered as Lambda would, redeliveries cut elsewhere included.

const TENANTS = ['acme', 'globex', 'initech'];
const CHANGES = 'archive/changes';
const TTL_PREFIX = 'archive';
const partitionBy = tenantFromPartitionKey();

/** Per tenant: 3 items put, each updated twice, one of them deleted; one more put already expired. */
async function writeChanges(dynamodb: ReturnType<typeof localClients>['dynamodb'], table: string) {
  const now = Math.floor(Date.now() / 1000);
  for (const tenant of TENANTS) {
    for (let i = 0; i < 3; i++) {
      const Item: Record<string, AttributeValue> = {
        pk: { S: `${tenant}#item#${i}` },
        total: { N: '12345678901234567890123456789012345678' },
        n: { N: '0' },
        expiresAt: { N: String(now + 86_400) },
      };
      await dynamodb.send(new PutItemCommand({ TableName: table, Item }));
    }
    for (let round = 1; round <= 2; round++)
      for (let i = 0; i < 3; i++)
        await dynamodb.send(
          new UpdateItemCommand({
            TableName: table,
            Key: { pk: { S: `${tenant}#item#${i}` } },
            UpdateExpression: 'SET n = :n',
            ExpressionAttributeValues: { ':n': { N: String(round) } },
          }),
        );
    await dynamodb.send(new DeleteItemCommand({ TableName: table, Key: { pk: { S: `${tenant}#item#0` } } }));
    await dynamodb.send(
      new PutItemCommand({
        TableName: table,
        Item: { pk: { S: `${tenant}#item#expired` }, expiresAt: { N: String(now - 3_600) } },
      }),
    );
  }
}

const itemOf = (keys: Record<string, AttributeValue | { S?: string }>) =>
  String((keys.pk as { S?: string }).S);
const tenantOf = (pk: string) => pk.slice(0, pk.indexOf('#'));

/** The eventIDs of each item's changes, in the order read. */
function perItem(rows: readonly { keys: Record<string, unknown>; eventID: string }[]): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const row of rows) {
    const item = itemOf(row.keys as never);
    out.set(item, [...(out.get(item) ?? []), row.eventID]);
  }
  return out;
}

describe('a change log: every change archived, compacted and erased by tenant', () => {
  const { dynamodb, streams, s3 } = localClients();

  it('holds every change once by eventID, in order per item; compaction keeps them all; erase takes one tenant', async () => {
    const source = await createTestTable(dynamodb);
    const bucket = await createTestBucket(s3);
    try {
      await writeChanges(dynamodb, source.tableName);
      await enableTtl(dynamodb, source.tableName, 'expiresAt');
      const expired = (r: { eventName?: string; userIdentity?: unknown }) =>
        r.eventName === 'REMOVE' && r.userIdentity !== undefined;
      const sdkRecords = await readStreamUntil(
        streams,
        source.streamArn,
        (records) => records.filter(expired).length >= TENANTS.length,
        120_000,
      );
      const stream: LambdaStreamRecord[] = sdkRecords.map((r) =>
        toLambdaRecord(r, { streamArn: source.streamArn }),
      );
      const count = (name: string) => stream.filter((r) => r.eventName === name).length;
      expect([count('INSERT'), count('MODIFY'), count('REMOVE')]).toEqual([12, 18, 6]);

      const sink = (prefix: string, tenants: boolean) =>
        new S3ArchiveSink({
          client: s3,
          bucket,
          prefix,
          ttlAttribute: 'expiresAt',
          // Two tenants per batch: the third's rows go unpartitioned, for compaction to move.
          ...(tenants ? { partitionBy, maxPartitionsPerBatch: 2 } : {}),
        });
      const handler = createStreamHandler({
        routes: [
          route({ name: 'ttl-delete', when: 'ttl-delete', to: sink(TTL_PREFIX, false) }),
          route({ name: 'change-log', when: RECORD_KINDS, to: sink(CHANGES, true) }),
        ],
        onUnrouted: 'fail',
        metrics: false,
      });
      const context = createLambdaContext({ timeoutMs: 60_000 });
      // Batches of 8, then two redeliveries cut at other points (Lambda retrying from a failed record).
      const batches: [number, number][] = [];
      for (let i = 0; i < stream.length; i += 8) batches.push([i, i + 8]);
      batches.push([5, 19], [21, 34]);
      for (const [from, to] of batches)
        expect(await handler({ Records: stream.slice(from, to) }, context)).toEqual({
          batchItemFailures: [],
        });

      const range = {
        client: s3,
        bucket,
        table: source.tableName,
        from: (stream[0]!.dynamodb.ApproximateCreationDateTime as number) * 1000 - 3_600_000,
        to: Date.now() + 3_600_000,
      };
      const readRows = async (options: { tenant?: string } = {}) => {
        const rows: ArchiveRow[] = [];
        for await (const row of readArchiveRows({
          ...range,
          prefix: CHANGES,
          ...options,
          ...(options.tenant ? { partitionBy } : {}),
        }))
          rows.push(row);
        return rows;
      };

      // Every change once by eventID; each item's changes in stream order; images per kind.
      const before = await snapshot(s3, bucket, `${CHANGES}/`);
      expect(duplicateRows(before)).toBeGreaterThan(0);
      const rows = await readRows();
      expect(rows.map((r) => r.eventID).sort()).toEqual(stream.map((r) => r.eventID).sort());
      expect(perItem(rows)).toEqual(
        perItem(stream.map((r) => ({ keys: r.dynamodb.Keys, eventID: r.eventID }))),
      );
      const byId = new Map(stream.map((r) => [r.eventID, r]));
      for (const row of rows) {
        const record = byId.get(row.eventID)!;
        expect(row.tenant).toBe(tenantOf(itemOf(row.keys)));
        expect(row.newImage).toEqual(record.dynamodb.NewImage);
        expect(row.oldImage).toEqual(record.dynamodb.OldImage);
        if (row.kind === 'insert')
          expect([row.newImage, row.oldImage === undefined]).toEqual([expect.anything(), true]);
        if (row.kind === 'modify') expect(row.oldImage?.n?.N).toBe(String(Number(row.newImage?.n?.N) - 1));
      }
      const kinds = rows.map((r) => r.kind);
      expect(kinds.filter((k) => k === 'ttl-delete')).toHaveLength(3);
      expect(kinds.filter((k) => k === 'user-delete')).toHaveLength(3);
      // The TTL archive beside it holds the TTL deletes only, as without the change log.
      const ttlRows: ArchiveRow[] = [];
      for await (const row of readArchiveRows({ ...range, prefix: TTL_PREFIX })) ttlRows.push(row);
      expect(ttlRows.map((r) => r.kind)).toEqual(['ttl-delete', 'ttl-delete', 'ttl-delete']);
      const ttlObjects = await snapshot(s3, bucket, `${TTL_PREFIX}/table=`);

      // Compaction removes the redeliveries' copies and keeps every distinct change.
      const report = await compactArchive({
        ...range,
        prefix: CHANGES,
        partitionBy,
        now: Date.now() + 3 * 86_400_000,
      });
      const duplicates = report.hours.reduce((n, h) => n + h.duplicates, 0);
      expect(duplicates).toBe(duplicateRows(before));
      const compacted = await snapshot(s3, bucket, `${CHANGES}/table=`);
      expect(duplicateRows(compacted)).toBe(0);
      expect(
        rawRows(compacted)
          .map((r) => r.eventID)
          .sort(),
      ).toEqual(stream.map((r) => r.eventID).sort());
      const afterCompaction = await readRows();
      expect(perItem(afterCompaction)).toEqual(perItem(rows));
      // Every compacted object is one tenant's: the unpartitioned rows moved to their tenants.
      expect([...compacted.keys()].every((key) => key.includes('/tenant='))).toBe(true);

      // Erasing one tenant removes all its changes, of every kind, and nothing else.
      const globex = rows.filter((r) => r.tenant === 'globex');
      expect(globex).toHaveLength(12);
      const erased = await eraseTenant({ ...range, prefix: CHANGES, tenant: 'globex', partitionBy });
      expect(erased.rowsErased).toBe(globex.length);
      const left = await readRows();
      expect(left.some((r) => r.tenant === 'globex' || itemOf(r.keys).startsWith('globex#'))).toBe(false);
      expect(perItem(left)).toEqual(perItem(afterCompaction.filter((r) => r.tenant !== 'globex')));
      expect(await readRows({ tenant: 'globex' })).toEqual([]);
      // What readArchive rebuilds from the log is the stream's own records, kinds included.
      const acme: LambdaStreamRecord[] = [];
      for await (const record of readArchive({ ...range, prefix: CHANGES, tenant: 'acme' }))
        acme.push(record.raw);
      expect(acme).toEqual(stream.filter((r) => itemOf(r.dynamodb.Keys).startsWith('acme#')));
      expect(await snapshot(s3, bucket, `${TTL_PREFIX}/table=`)).toEqual(ttlObjects);
    } finally {
      await source.drop();
    }
    // The TTL sweep takes ~10 s idle; the bound only catches a hang.
  }, 180_000);
});
