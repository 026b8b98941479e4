import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { DynamoDBClient, ScanCommand } from '@aws-sdk/client-dynamodb';
import { describe, expect, it } from 'vitest';
import { LOCAL_CREDENTIALS, LOCAL_REGION } from '../../../src/local/dynamodb-local.js';
import { parseStreamRecord } from '../../../src/records/index.js';
import { RestoreError, restoreItems } from '../../../src/sinks/index.js';
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

  it('writes 25 items per BatchWriteItem and restores the old images', async () => {
    const table = await createTestTable(dynamodb, { keySchema, attributeDefinitions });
    try {
      const records = sampleTtlDeletes(60);
      const result = await restoreItems({ client: dynamodb, tableName: table.tableName, records });
      expect(result).toEqual({ written: 60, calls: 3 });
      const scan = await dynamodb.send(new ScanCommand({ TableName: table.tableName, Select: 'COUNT' }));
      expect(scan.Count).toBe(60);
    } finally {
      await table.drop();
    }
  });

  it('puts a repeated key in a later call so the later image wins', async () => {
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
      const result = await restoreItems({ client, tableName: 't', records: sampleTtlDeletes(20) });
      expect(result).toEqual({ written: 20, calls: 2 });
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
});
