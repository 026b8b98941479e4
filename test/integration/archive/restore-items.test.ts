import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { DynamoDBClient, GetItemCommand, PutItemCommand, ScanCommand } from '@aws-sdk/client-dynamodb';
import { describe, expect, it } from 'vitest';
import { restoreItems } from '../../../src/archive.js';
import { InvalidOptionsError } from '../../../src/core/errors.js';
import { LOCAL_CREDENTIALS, LOCAL_REGION } from '../../../src/local/servers/dynamodb-local.js';
import { parseStreamRecord } from '../../../src/records/index.js';
import type { AttributeMap } from '../../../src/records/types.js';
import { RestoreError, RestoreWriteError } from '../../../src/sinks/index.js';
import { sampleTtlDeletes } from '../../../src/sinks/sample-records.js';
import { createTestTable, localClients } from '../../support/aws.js';

const keySchema = [
  { AttributeName: 'pk', KeyType: 'HASH' as const },
  { AttributeName: 'sk', KeyType: 'RANGE' as const },
];
const attributeDefinitions = [
  { AttributeName: 'pk', AttributeType: 'S' as const },
  { AttributeName: 'sk', AttributeType: 'S' as const },
];

describe('restoreItems', () => {
  const { dynamodb } = localClients();

  it('with overwrite, writes 25 items per BatchWriteItem and restores the old images', async () => {
    const table = await createTestTable(dynamodb, { keySchema, attributeDefinitions });
    try {
      const records = sampleTtlDeletes(60);
      const result = await restoreItems({
        client: dynamodb,
        tableName: table.tableName,
        records,
        overwrite: true,
      });
      expect(result).toEqual({ written: 60, skipped: 0, calls: 3 });
      const scan = await dynamodb.send(new ScanCommand({ TableName: table.tableName, Select: 'COUNT' }));
      expect(scan.Count).toBe(60);
    } finally {
      await table.drop();
    }
  });

  it('with overwrite, puts a repeated key in a later call so the later image wins', async () => {
    const table = await createTestTable(dynamodb, { keySchema, attributeDefinitions });
    try {
      const [a] = sampleTtlDeletes(1, { start: 0 });
      // A second image of the same key, later in the stream.
      const raw = structuredClone(a?.raw) as NonNullable<typeof a>['raw'];
      raw.dynamodb.SequenceNumber = '999999999999999999999';
      raw.dynamodb.OldImage = { ...raw.dynamodb.OldImage, ratio: { N: '42' } };
      const result = await restoreItems({
        client: dynamodb,
        tableName: table.tableName,
        records: [a as never, parseStreamRecord(raw)],
        overwrite: true,
      });
      expect(result.calls).toBe(2);
      const scan = await dynamodb.send(new ScanCommand({ TableName: table.tableName }));
      expect(scan.Items?.map((i) => i.ratio?.N)).toEqual(['42']);
    } finally {
      await table.drop();
    }
  });

  it('resubmits UnprocessedItems until none are left', async () => {
    // DynamoDB Local never throttles, so a small endpoint speaking the DynamoDB JSON protocol
    // answers the first call with half of its items unprocessed.
    const bodies: { RequestItems: Record<string, unknown[]> }[] = [];
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
        bodies.push(body);
        const items = body.RequestItems.t as unknown[];
        const unprocessed = bodies.length === 1 ? { t: items.slice(10) } : {};
        res.writeHead(200, { 'content-type': 'application/x-amz-json-1.0' });
        res.end(JSON.stringify({ UnprocessedItems: unprocessed }));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const client = new DynamoDBClient({ region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS, endpoint });
      const result = await restoreItems({
        client,
        tableName: 't',
        records: sampleTtlDeletes(20),
        overwrite: true,
      });
      expect(result).toEqual({ written: 20, skipped: 0, calls: 2 });
      expect(bodies.map((b) => b.RequestItems.t?.length)).toEqual([20, 10]);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('refuses a record with no image to restore', async () => {
    const [record] = sampleTtlDeletes(1);
    const keysOnly = parseStreamRecord({
      ...record?.raw,
      dynamodb: { ...record?.raw.dynamodb, OldImage: undefined, StreamViewType: 'KEYS_ONLY' },
    });
    await expect(restoreItems({ client: dynamodb, tableName: 'x', records: [keysOnly] })).rejects.toThrow(
      RestoreError,
    );
  });

  it('by default keeps an item that exists again and reports it skipped', async () => {
    const table = await createTestTable(dynamodb, { keySchema, attributeDefinitions });
    try {
      const records = sampleTtlDeletes(30);
      const recreated = records[7]?.raw.dynamodb.Keys as AttributeMap;
      // Re-created by the application after it expired: the restore must not replace it.
      await dynamodb.send(
        new PutItemCommand({
          TableName: table.tableName,
          Item: {
            pk: { S: recreated.pk?.S as string },
            sk: { S: recreated.sk?.S as string },
            fresh: { BOOL: true },
          },
        }),
      );
      const skipped: AttributeMap[] = [];
      const result = await restoreItems({
        client: dynamodb,
        tableName: table.tableName,
        records,
        onSkipped: (keys) => skipped.push(keys),
      });
      expect(result).toEqual({ written: 29, skipped: 1, calls: 30 });
      expect(skipped).toEqual([recreated]);
      const kept = await dynamodb.send(
        new GetItemCommand({
          TableName: table.tableName,
          Key: { pk: { S: recreated.pk?.S as string }, sk: { S: recreated.sk?.S as string } },
        }),
      );
      expect(kept.Item?.fresh).toEqual({ BOOL: true });
      expect(kept.Item?.amount).toBeUndefined();
      const scan = await dynamodb.send(new ScanCommand({ TableName: table.tableName, Select: 'COUNT' }));
      expect(scan.Count).toBe(30);

      // A second run writes nothing: everything exists.
      const again = await restoreItems({
        client: dynamodb,
        tableName: table.tableName,
        records,
        concurrency: 3,
      });
      expect(again).toEqual({ written: 0, skipped: 30, calls: 30 });
    } finally {
      await table.drop();
    }
  });

  it('by default still lets the later image of a key repeated in one call win', async () => {
    const table = await createTestTable(dynamodb, { keySchema, attributeDefinitions });
    try {
      const [a] = sampleTtlDeletes(1, { start: 0 });
      const images = [a as NonNullable<typeof a>];
      for (const ratio of ['1', '2', '3']) {
        const raw = structuredClone(a?.raw) as NonNullable<typeof a>['raw'];
        raw.dynamodb.SequenceNumber = `99999999999999999999${ratio}`;
        raw.dynamodb.OldImage = { ...raw.dynamodb.OldImage, ratio: { N: ratio } };
        images.push(parseStreamRecord(raw));
      }
      const result = await restoreItems({ client: dynamodb, tableName: table.tableName, records: images });
      expect(result).toEqual({ written: 4, skipped: 0, calls: 4 });
      const scan = await dynamodb.send(new ScanCommand({ TableName: table.tableName }));
      expect(scan.Items?.map((i) => i.ratio?.N)).toEqual(['3']);
    } finally {
      await table.drop();
    }
  });

  it.each([
    ['conditional puts', false],
    ['batch writes', true],
  ])('removes or resets the TTL attribute (%s)', async (_mode, overwrite) => {
    const table = await createTestTable(dynamodb, { keySchema, attributeDefinitions });
    try {
      const records = sampleTtlDeletes(4);
      expect(records[0]?.raw.dynamodb.OldImage?.ttl).toBeDefined();
      await restoreItems({
        client: dynamodb,
        tableName: table.tableName,
        records: records.slice(0, 2),
        overwrite,
        ttl: { attribute: 'ttl', remove: true },
      });
      await restoreItems({
        client: dynamodb,
        tableName: table.tableName,
        records: records.slice(2),
        overwrite,
        ttl: { attribute: 'ttl', value: 4_102_444_800 },
      });
      const items = (await dynamodb.send(new ScanCommand({ TableName: table.tableName }))).Items ?? [];
      const bySk = new Map(items.map((i) => [i.sk?.S, i]));
      const ttlOf = (n: number) => bySk.get(records[n]?.raw.dynamodb.Keys.sk?.S)?.ttl;
      expect([ttlOf(0), ttlOf(1), ttlOf(2), ttlOf(3)]).toEqual([
        undefined,
        undefined,
        { N: '4102444800' },
        { N: '4102444800' },
      ]);
      // Everything else comes back as archived.
      expect(bySk.get(records[0]?.raw.dynamodb.Keys.sk?.S)?.amount).toEqual(
        records[0]?.raw.dynamodb.OldImage?.amount,
      );
    } finally {
      await table.drop();
    }
  });

  it('counts only writes that succeeded when a conditional put fails', async () => {
    const table = await createTestTable(dynamodb, { keySchema, attributeDefinitions });
    try {
      const records = sampleTtlDeletes(40);
      // A key attribute of the wrong type: DynamoDB rejects that put with a ValidationException.
      const bad = structuredClone(records[20]?.raw) as NonNullable<(typeof records)[0]>['raw'];
      bad.dynamodb.OldImage = { ...bad.dynamodb.OldImage, pk: { N: '1' } };
      records[20] = parseStreamRecord(bad);
      const error = await restoreItems({
        client: dynamodb,
        tableName: table.tableName,
        records,
        concurrency: 4,
      }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(RestoreWriteError);
      const failure = error as RestoreWriteError;
      expect(failure.name).toBe('RestoreWriteError');
      expect(failure.sequenceNumber).toBe(records[20]?.sequenceNumber);
      expect(failure.eventID).toBe(records[20]?.eventID);
      expect((failure.cause as Error).name).toBe('ValidationException');
      const scan = await dynamodb.send(new ScanCommand({ TableName: table.tableName, Select: 'COUNT' }));
      expect(failure.written).toBe(scan.Count);
      expect(failure.written).toBeLessThan(40);
      expect(failure.written).toBeGreaterThanOrEqual(20);
    } finally {
      await table.drop();
    }
  });

  it('counts only batches that succeeded when a BatchWriteItem call fails', async () => {
    // The first call succeeds, the second is rejected: 25 written, not 50.
    let calls = 0;
    const server = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        calls++;
        if (calls === 1) {
          res.writeHead(200, { 'content-type': 'application/x-amz-json-1.0' });
          res.end(JSON.stringify({ UnprocessedItems: {} }));
        } else {
          res.writeHead(400, { 'content-type': 'application/x-amz-json-1.0' });
          res.end(
            JSON.stringify({ __type: 'com.amazonaws.dynamodb.v20120810#ValidationException', message: 'no' }),
          );
        }
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const client = new DynamoDBClient({ region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS, endpoint });
      const records = sampleTtlDeletes(60);
      const error = await restoreItems({ client, tableName: 't', records, overwrite: true }).catch(
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(RestoreWriteError);
      expect(error).toMatchObject({
        written: 25,
        skipped: 0,
        calls: 2,
        sequenceNumber: records[25]?.sequenceNumber,
      });
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('lets puts already sent finish before it rejects for a record it cannot restore', async () => {
    // An endpoint that answers each PutItem only after a pause: a restore that rejects while
    // puts are in flight would leave the caller looking at a table still being written.
    let received = 0;
    let answered = 0;
    const server = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        received++;
        setTimeout(() => {
          answered++;
          res.writeHead(200, { 'content-type': 'application/x-amz-json-1.0' });
          res.end('{}');
        }, 50);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const client = new DynamoDBClient({ region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS, endpoint });
      const records = sampleTtlDeletes(4);
      const last = records[3] as NonNullable<(typeof records)[0]>;
      records[3] = parseStreamRecord({
        ...last.raw,
        dynamodb: { ...last.raw.dynamodb, OldImage: undefined, StreamViewType: 'KEYS_ONLY' },
      });
      async function* slowly() {
        for (const record of records) {
          yield record;
          // Give each put time to reach the endpoint before the next record is read.
          await new Promise((resolve) => setTimeout(resolve, 10));
        }
      }
      const error = await restoreItems({ client, tableName: 't', records: slowly() }).catch(
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(RestoreError);
      expect(received).toBe(3);
      expect(answered).toBe(received);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('validates options', async () => {
    const records = sampleTtlDeletes(1);
    const base = { client: dynamodb, tableName: 'x', records };
    await expect(restoreItems({ ...base, overWrite: true } as never)).rejects.toThrow(InvalidOptionsError);
    await expect(restoreItems({ ...base, overwrite: 'yes' } as never)).rejects.toThrow(/overwrite/);
    await expect(restoreItems({ ...base, concurrency: 0 })).rejects.toThrow(/concurrency/);
    await expect(restoreItems({ ...base, ttl: { attribute: 'ttl' } as never })).rejects.toThrow(
      /exactly one/,
    );
    await expect(
      restoreItems({ ...base, ttl: { attribute: 'ttl', remove: true, value: 1 } as never }),
    ).rejects.toThrow(/exactly one/);
    await expect(restoreItems({ ...base, ttl: { attribute: '', remove: true } })).rejects.toThrow(
      /attribute/,
    );
    await expect(restoreItems({ ...base, ttl: { attribute: 'ttl', value: 1.5 } })).rejects.toThrow(
      /ttl.value/,
    );
    await expect(
      restoreItems({ ...base, ttl: { attribute: 'ttl', remove: true, when: 1 } as never }),
    ).rejects.toThrow(InvalidOptionsError);
    await expect(restoreItems({ ...base, onSkipped: 'log' } as never)).rejects.toThrow(/onSkipped/);
  });
});
