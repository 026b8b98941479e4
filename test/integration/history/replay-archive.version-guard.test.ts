import { DeleteItemCommand, PutItemCommand, ScanCommand, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import { describe, expect, it } from 'vitest';
import { replayArchive } from '../../../src/history.js';
import type { PipelineConfig } from '../../../src/pipeline/config.js';
import { toJsonAttributeMap } from '../../../src/records/convert.js';
import { parseStreamEvent } from '../../../src/records/index.js';
import type { AttributeMap, ClassifiedRecord } from '../../../src/records/types.js';
import { S3ArchiveSink } from '../../../src/s3.js';
import type { Sink } from '../../../src/sinks/types.js';
import { versionGuard } from '../../../src/sinks/version-guard.js';
import { DynamoDbVersionStore } from '../../../src/version-store.js';
import { createTestBucket, createTestTable, localClients, readStreamUntil } from '../../support/aws.js';

const { dynamodb, streams, s3 } = localClients();

/** Strings, numbers and string sets only: their DynamoDB JSON is the SDK's shape too. */
const sdk = (map: AttributeMap): never => map as never;

/** A projection that stores item state in a DynamoDB table: PutItem the new image, DeleteItem on a delete. */
function projection(tableName: string): Sink & { writes: number } {
  const sink = {
    name: 'projection',
    writes: 0,
    async write(records: readonly ClassifiedRecord[]) {
      for (const record of records) {
        sink.writes++;
        const image = record.raw.dynamodb.NewImage;
        if (record.kind === 'user-delete' || record.kind === 'ttl-delete' || image === undefined)
          await dynamodb.send(
            new DeleteItemCommand({
              TableName: tableName,
              Key: sdk(record.raw.dynamodb.Keys),
            }),
          );
        else await dynamodb.send(new PutItemCommand({ TableName: tableName, Item: sdk(image) }));
      }
      return {};
    },
  };
  return sink;
}

async function scan(tableName: string): Promise<Map<string, AttributeMap>> {
  const out = new Map<string, AttributeMap>();
  const page = await dynamodb.send(new ScanCommand({ TableName: tableName, ConsistentRead: true }));
  for (const item of page.Items ?? []) {
    const json = toJsonAttributeMap(item);
    out.set(json.pk?.S as string, json);
  }
  return out;
}

describe('replayArchive into a versionGuard projection', () => {
  it('rebuilds a table from its archived changes; a second replay, or an older range after it, changes nothing', async () => {
    const source = await createTestTable(dynamodb);
    const target = await createTestTable(dynamodb);
    const versions = await createTestTable(dynamodb);
    const bucket = await createTestBucket(s3);
    try {
      // Every kind of change, items touched several times, some deleted and written again.
      let writes = 0;
      for (let round = 0; round < 4; round++) {
        for (let i = 0; i < 10; i++) {
          const pk = { S: `item-${i}` };
          writes++;
          if (round === 0 || (round === 3 && i % 4 === 0))
            await dynamodb.send(
              new PutItemCommand({
                TableName: source.tableName,
                Item: {
                  pk,
                  round: { N: String(round) },
                  big: { N: `9876543210987654321098765432109876543${i}` },
                },
              }),
            );
          else if (round === 2 && i % 4 === 0)
            await dynamodb.send(new DeleteItemCommand({ TableName: source.tableName, Key: { pk } }));
          else if (round === 3 && i % 4 !== 0)
            await dynamodb.send(
              new UpdateItemCommand({
                TableName: source.tableName,
                Key: { pk },
                UpdateExpression: 'SET #r = :r',
                ExpressionAttributeNames: { '#r': 'round' },
                ExpressionAttributeValues: { ':r': { N: String(round) } },
              }),
            );
          else
            await dynamodb.send(
              new UpdateItemCommand({
                TableName: source.tableName,
                Key: { pk },
                UpdateExpression: 'SET #r = :r, tags = :t',
                ExpressionAttributeNames: { '#r': 'round' },
                ExpressionAttributeValues: { ':r': { N: String(round) }, ':t': { SS: [`r${round}`, 'x'] } },
              }),
            );
        }
      }
      const raw = await readStreamUntil(streams, source.streamArn, (records) => records.length >= writes);
      const records = parseStreamEvent(raw, { streamArn: source.streamArn });
      // An archive of every change, with a redelivery cut elsewhere (duplicate rows).
      const archive = new S3ArchiveSink({ client: s3, bucket, prefix: 'changes' });
      for (let i = 0; i < records.length; i += 9)
        expect(await archive.write(records.slice(i, i + 9), {})).toEqual({});
      expect(await archive.write(records.slice(4, 22), {})).toEqual({});

      const sink = projection(target.tableName);
      const config: PipelineConfig = {
        routes: [
          {
            when: ['insert', 'modify', 'user-delete', 'ttl-delete'],
            to: versionGuard(sink, {
              store: new DynamoDbVersionStore({ tableName: versions.tableName, client: dynamodb }),
              // DynamoDB Local rounds ApproximateCreationDateTime down to the minute.
              creationTimeResolution: 60,
            }),
          },
        ],
        metrics: false,
      };
      const range = {
        client: s3,
        bucket,
        prefix: 'changes',
        table: source.tableName,
        from: Date.now() - 3_600_000,
        to: Date.now() + 3_600_000,
        batchSize: 7,
      };
      const first = await replayArchive(config, range);
      expect(first).toMatchObject({ complete: true, delivered: records.length, skippedDuplicates: 18 });
      const want = await scan(source.tableName);
      expect(want.size).toBe(10);
      expect(await scan(target.tableName)).toEqual(want);

      // Again: every record is as old as what the guard holds, and nothing is written.
      const writesBefore = sink.writes;
      const second = await replayArchive(config, range);
      expect(second.delivered).toBe(records.length);
      expect(sink.writes).toBe(writesBefore);
      // An older part of the history replayed after it cannot roll an item back either.
      const early = records[5] as ClassifiedRecord;
      await replayArchive(config, { ...range, keys: [early.keys as Record<string, unknown>] });
      expect(sink.writes).toBe(writesBefore);
      expect(await scan(target.tableName)).toEqual(want);
    } finally {
      await Promise.all([source.drop(), target.drop(), versions.drop()]);
    }
  }, 120_000);
});
