import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DeleteItemCommand, PutItemCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MemoryFailureDestination } from '../../../../src/local/emulator/destinations.js';
import { capture, replay } from '../../../../src/local/emulator/replay.js';
import { createTestTable, enableTtl, localClients, readStreamUntil } from '../../../support/aws.js';

const { dynamodb, streams } = localClients();
let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tidewater-capture-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('capture → replay', () => {
  it('captures a live DynamoDB Local stream (with a real TTL delete) and replays it with a TTL filter', async () => {
    // TTL on only after the writes: the sweep then cannot delete 'expired' between them, so the
    // stream is INSERT expired, INSERT kept, REMOVE kept, then the TTL REMOVE of expired.
    const table = await createTestTable(dynamodb);
    const past = Math.floor(Date.now() / 1000) - 60;
    await dynamodb.send(
      new PutItemCommand({
        TableName: table.tableName,
        Item: { pk: { S: 'expired' }, expiresAt: { N: String(past) } },
      }),
    );
    await dynamodb.send(
      new PutItemCommand({
        TableName: table.tableName,
        Item: { pk: { S: 'kept' }, blob: { B: new Uint8Array([1, 2, 255]) } },
      }),
    );
    await dynamodb.send(new DeleteItemCommand({ TableName: table.tableName, Key: { pk: { S: 'kept' } } }));
    await enableTtl(dynamodb, table.tableName, 'expiresAt');
    await readStreamUntil(streams, table.streamArn, (records) =>
      records.some((r) => r.userIdentity?.Type === 'Service'),
    );

    const file = join(dir, 'stream.jsonl');
    const captured = await capture({ streams, streamArn: table.streamArn, file });
    expect(captured.records).toBe(4);
    // The capture holds item images: readable by its owner only.
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    const lines = (await readFile(file, 'utf8'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines.every((l) => l.streamArn === table.streamArn && typeof l.shardId === 'string')).toBe(true);
    expect(lines[1].dynamodb.NewImage.blob).toEqual({ B: Buffer.from([1, 2, 255]).toString('base64') });

    const delivered: unknown[] = [];
    const result = await replay({
      files: file,
      mapping: {
        filterPatterns: [{ userIdentity: { type: ['Service'], principalId: ['dynamodb.amazonaws.com'] } }],
        onFailure: new MemoryFailureDestination(),
        handler: async (event) => {
          delivered.push(...event.Records);
        },
      },
    });
    expect(delivered).toHaveLength(1);
    expect(delivered[0]).toMatchObject({
      eventName: 'REMOVE',
      eventSourceARN: table.streamArn,
      userIdentity: { type: 'Service', principalId: 'dynamodb.amazonaws.com' },
      dynamodb: { Keys: { pk: { S: 'expired' } } },
    });
    expect(result.shards[0]?.filtered).toBe(3);
    await table.drop();
  });
});
