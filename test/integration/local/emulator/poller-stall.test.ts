import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PutItemCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EventSourceMappingEmulator } from '../../../../src/local/emulator/emulator.js';
import { ReplayStalledError } from '../../../../src/local/emulator/errors.js';
import { StreamPoller } from '../../../../src/local/emulator/poller.js';
import { createTestTable, localClients } from '../../../support/aws.js';

/** Calls after which the poison record passes: without the stall check the run ends, and fails. */
const GUARD = 50;

const { dynamodb, streams } = localClients();
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tidewater-stall-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('a live stream with a record that always fails (DynamoDB Local)', () => {
  it('ends the run with ReplayStalledError, keeps the checkpoint before the record, and a new run resumes there', async () => {
    const table = await createTestTable(dynamodb);
    for (const pk of ['ok', 'poison', 'after'])
      await dynamodb.send(new PutItemCommand({ TableName: table.tableName, Item: { pk: { S: pk } } }));
    const file = join(dir, 'checkpoint.json');
    let poisonCalls = 0;
    const delivered: string[] = [];
    const emulator = new EventSourceMappingEmulator({
      batchSize: 1,
      handler: async (event) => {
        const pk = event.Records[0]?.dynamodb.Keys.pk?.S as string;
        if (pk === 'poison' && ++poisonCalls <= GUARD) throw new Error(`cannot archive ${pk}`);
        delivered.push(pk);
      },
    });
    const poller = () => new StreamPoller({ streams, streamArn: table.streamArn, checkpointFile: file });
    const error = await poller()
      .runEmulator(emulator, { stopWhenCaughtUp: true })
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(error).toBeInstanceOf(ReplayStalledError);
    const stalled = error as ReplayStalledError;
    expect(stalled.attempts).toBe(10);
    expect(stalled.lastError).toBe('Error: cannot archive poison');
    expect(stalled.sequenceNumbers).toHaveLength(1);
    expect(stalled.message).toContain(stalled.sequenceNumber as string);
    expect(poisonCalls).toBe(10);
    expect(delivered).toEqual(['ok']);
    // The checkpoint file stops before the poison record: the next run starts at it.
    const saved = JSON.parse(await readFile(file, 'utf8'));
    const [shard] = Object.values(saved.shards) as Array<{ sequenceNumber: string }>;
    expect(shard?.sequenceNumber).toBe(stalled.checkpoint);
    expect(BigInt(shard?.sequenceNumber as string)).toBeLessThan(BigInt(stalled.sequenceNumber as string));

    // Fixed handler, new emulator: the poison record and what follows it, nothing before.
    const resumed: string[] = [];
    await poller().runEmulator(
      new EventSourceMappingEmulator({
        handler: async (event) => {
          resumed.push(...event.Records.map((r) => r.dynamodb.Keys.pk?.S as string));
        },
      }),
      { stopWhenCaughtUp: true },
    );
    expect(resumed).toEqual(['poison', 'after']);
    await table.drop();
  });
});
