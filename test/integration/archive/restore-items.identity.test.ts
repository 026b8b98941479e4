import { ScanCommand } from '@aws-sdk/client-dynamodb';
import { describe, expect, it } from 'vitest';
import { RestoreError } from '../../../src/archive/errors.js';
import { restoreItems } from '../../../src/archive.js';
import { parseStreamRecord } from '../../../src/records/index.js';
import { createTestTable, localClients } from '../../support/aws.js';

const { dynamodb } = localClients();
const numberSortKey = {
  keySchema: [
    { AttributeName: 'pk', KeyType: 'HASH' as const },
    { AttributeName: 'sk', KeyType: 'RANGE' as const },
  ],
  attributeDefinitions: [
    { AttributeName: 'pk', AttributeType: 'S' as const },
    { AttributeName: 'sk', AttributeType: 'N' as const },
  ],
};

/** A user delete of item (order, sk) whose old image carries `rev`, at stream position `sequence`. */
function deleted(sk: string, rev: string, sequence: string) {
  const keys = { pk: { S: 'order' }, sk: { N: sk } };
  return parseStreamRecord({
    eventID: `e${sequence}`,
    eventName: 'REMOVE',
    dynamodb: { Keys: keys, OldImage: { ...keys, rev: { N: rev } }, SequenceNumber: sequence },
  });
}

describe('restoreItems: one item, whatever spelling its number key arrives in', () => {
  for (const overwrite of [true, false]) {
    it(`${overwrite ? 'batch writes' : 'conditional puts'}: images of 1.5 and 1.50 are one item, the later wins`, async () => {
      const table = await createTestTable(dynamodb, numberSortKey);
      try {
        const records = [
          deleted('1.5', '1', '100'),
          deleted('1.50', '2', '200'),
          deleted('15E-1', '3', '300'),
        ];
        const result = await restoreItems({
          client: dynamodb,
          tableName: table.tableName,
          records,
          overwrite,
        });
        // One item, three images: each in its own call, in stream order.
        expect(result).toEqual({ written: 3, skipped: 0, calls: 3 });
        const items = (await dynamodb.send(new ScanCommand({ TableName: table.tableName }))).Items;
        expect(items).toEqual([{ pk: { S: 'order' }, sk: { N: '1.5' }, rev: { N: '3' } }]);
      } finally {
        await table.drop();
      }
    });
  }

  it('refuses an archived row whose keys are not a DynamoDB key, naming the row, never its value', async () => {
    const row = {
      eventID: 'e1',
      sequenceNumber: '1',
      eventName: 'REMOVE',
      keys: { pk: { S: 'order' }, sk: { N: 'secret-1' } },
      oldImage: { pk: { S: 'order' }, sk: { N: 'secret-1' } },
    };
    const restoring = restoreItems({ client: dynamodb, tableName: 'never-written', rows: [row as never] });
    await expect(restoring).rejects.toThrow(RestoreError);
    await expect(restoring).rejects.toThrow(/eventID=e1 sequenceNumber=1/);
    await expect(restoring).rejects.not.toThrow(/secret/);
  });
});
