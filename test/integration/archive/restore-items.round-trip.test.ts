import { type AttributeValue, PutItemCommand, ScanCommand } from '@aws-sdk/client-dynamodb';
import { describe, expect, it } from 'vitest';
import { readArchive, restoreItems } from '../../../src/archive.js';
import { parseStreamEvent } from '../../../src/records/index.js';
import type { ClassifiedRecord } from '../../../src/records/types.js';
import { S3ArchiveSink } from '../../../src/s3.js';
import { createTestBucket, createTestTable, localClients, readStreamUntil } from '../../support/aws.js';

function item(i: number, expiresAt: number): Record<string, AttributeValue> {
  return {
    pk: { S: `item-${i}` },
    total: { N: `9876543210987654321098765432109876543${i}` },
    // No trailing zero: DynamoDB stores numbers normalized, and this compares with what was put.
    fraction: { N: `0.1234567890123456789012345678901234567${i + 1}` },
    blob: { B: new Uint8Array([0, 255, i, 128, 7]) },
    blobs: { BS: [new Uint8Array([i]), new Uint8Array([1, 2, 3])] },
    tags: { SS: ['a', `t${i}`] },
    nums: { NS: ['1', `12345678901234567890123456789012345678`] },
    nested: { M: { list: { L: [{ S: 'x' }, { N: String(i) }, { NULL: true }, { BOOL: true }] } } },
    expiresAt: { N: String(expiresAt) },
  };
}

function byPk(a: Record<string, AttributeValue>, b: Record<string, AttributeValue>): number {
  return String(a.pk?.S).localeCompare(String(b.pk?.S));
}

/** SDK binaries come back as Uint8Array subclasses: compare bytes. Sets have no order: compare sorted. */
function normalize(items: Record<string, AttributeValue>[]): unknown {
  return JSON.parse(
    JSON.stringify(items, (k, v) => {
      if (v instanceof Uint8Array) return Buffer.from(v).toString('base64');
      if ((k === 'SS' || k === 'NS' || k === 'BS') && Array.isArray(v)) {
        return v.map((m) => (m instanceof Uint8Array ? Buffer.from(m).toString('base64') : m)).sort();
      }
      return v;
    }),
  );
}

describe('archive TTL deletes from a DynamoDB Local stream, read them back and restore', () => {
  const { dynamodb, streams, s3 } = localClients();

  it('restores items identical to what expired', async () => {
    const source = await createTestTable(dynamodb, { ttlAttribute: 'expiresAt' });
    const target = await createTestTable(dynamodb);
    const bucket = await createTestBucket(s3);
    try {
      const expiresAt = Math.floor(Date.now() / 1000) + 1;
      const originals = Array.from({ length: 8 }, (_, i) => item(i, expiresAt));
      for (const it of originals)
        await dynamodb.send(new PutItemCommand({ TableName: source.tableName, Item: it }));

      const raw = await readStreamUntil(
        streams,
        source.streamArn,
        (records) => records.filter((r) => r.eventName === 'REMOVE').length >= originals.length,
        120_000,
      );
      const records = parseStreamEvent(raw, { streamArn: source.streamArn });
      const deletes = records.filter((r) => r.eventName === 'REMOVE');
      expect(deletes.map((r) => r.kind)).toEqual(Array(originals.length).fill('ttl-delete'));

      const sink = new S3ArchiveSink({
        client: s3,
        bucket,
        prefix: 'ttl-archive',
        ttlAttribute: 'expiresAt',
      });
      expect(await sink.write(deletes, {})).toEqual({});
      // Redelivery must not change what is read back.
      expect(await sink.write(deletes, {})).toEqual({});

      const back: ClassifiedRecord[] = [];
      const firstTime = (deletes[0]?.approximateCreationTime ?? 0) * 1000;
      for await (const r of readArchive({
        client: s3,
        bucket,
        prefix: 'ttl-archive',
        table: source.tableName,
        from: firstTime - 3_600_000,
        to: Date.now() + 3_600_000,
      })) {
        back.push(r);
      }
      expect(back.map((r) => r.raw)).toEqual(deletes.map((r) => r.raw));
      expect(back.every((r) => r.kind === 'ttl-delete')).toBe(true);

      const result = await restoreItems({ client: dynamodb, tableName: target.tableName, records: back });
      expect(result.written).toBe(originals.length);
      const restored = (await dynamodb.send(new ScanCommand({ TableName: target.tableName }))).Items ?? [];
      expect(normalize(restored.sort(byPk))).toEqual(normalize([...originals].sort(byPk)));
    } finally {
      await Promise.all([source.drop(), target.drop()]);
    }
    // ~10 s idle, ~16 s with the cores busy: the timeout and the stream wait above only catch a hang.
  }, 180_000);
});
