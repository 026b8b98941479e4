import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CreateBucketCommand } from '@aws-sdk/client-s3';
import { describe, expect, it } from 'vitest';
import { EXIT } from '../../../src/cli/exit-codes.js';
import { streamEvents } from '../../../src/local/emulator/events.js';
import { toKinesisRecord } from '../../../src/records/kinesis-encode.js';
import { uniqueName } from '../../support/aws.js';
import { cliTestClients, localEnvFile, runCli } from '../../support/cli-test.js';
import { archivedOrders } from '../../support/ttl-orders.js';

// The archive function of the Kinesis orders app (`stream: type: kinesis`), replayed from a file
// of Lambda Kinesis records through the Kinesis mapping's rules: its filter on the decoded data,
// its batches per shard.
const config = join(
  import.meta.dirname,
  '..',
  '..',
  'fixtures',
  'apps',
  'serverless-kinesis',
  'serverless.yml',
);
const clients = cliTestClients();

async function replayFile(
  lines: unknown[],
  stage: string,
): Promise<{ code: number; out: string; err: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'tidewater-replay-kinesis-'));
  const file = join(dir, 'events.jsonl');
  await writeFile(file, lines.map((line) => `${JSON.stringify(line)}\n`).join(''));
  return runCli([
    'replay',
    file,
    '-c',
    config,
    '--stage',
    stage,
    '--local-env',
    await localEnvFile(dir),
    '--no-progress',
  ]);
}

// Stamped now: the archive's own record-age check (MAX_RECORD_AGE_SECONDS) reads the wall clock.
const events = streamEvents({
  tableName: 'orders',
  keyAttributes: ['pk'],
  now: () => Math.floor(Date.now() / 1000),
});
const changes = [
  events.insert({ pk: 'new' }),
  events.ttlDelete({ pk: 'expired', expiresAt: 1_700_000_000 }),
  events.ttlDelete({ pk: 'lapsed', expiresAt: 1_700_000_001 }),
];

describe('tidewater replay of a stream: type: kinesis function', () => {
  it('replays Lambda Kinesis records through the Kinesis mapping: the filter on data, the TTL deletes archived', async () => {
    const stage = uniqueName('rk').toLowerCase();
    const bucket = `orders-kinesis-${stage}-archivebucket`;
    await clients.s3.send(new CreateBucketCommand({ Bucket: bucket }));
    const streamArn = 'arn:aws:kinesis:us-east-1:000000000000:stream/orders-kinesis-changes';
    const records = changes.map((change, i) => ({
      ...toKinesisRecord(change, { sequenceNumber: String(4960000000000000 + i), tableName: 'orders' }),
      eventSourceARN: streamArn,
    }));
    // One Lambda event with the first two, the third as a single record line.
    const { code, out, err } = await replayFile([{ Records: records.slice(0, 2) }, records[2]], stage);
    expect(code, err).toBe(EXIT.ok);
    // The mapping's filter (data.eventName REMOVE) dropped the insert; the archive took the TTL deletes.
    expect(out).toMatch(/shardId-000000000000: 3 records, \d+ invocations?, 1 filtered out, 0 discarded/);
    const rows = await archivedOrders(clients.s3, bucket);
    expect(rows.map((row) => [row.kind, row.keys.pk?.S])).toEqual([
      ['ttl-delete', 'expired'],
      ['ttl-delete', 'lapsed'],
    ]);
  });

  it.each([
    ['a DynamoDB stream event', events.event(...changes), 'is not a Lambda Kinesis record'],
    [
      'a record without a sequence number',
      { eventSource: 'aws:kinesis', eventID: 'shardId-000000000000:1', kinesis: { data: 'e30=' } },
      'has no numeric kinesis.sequenceNumber',
    ],
    ['a list', [1, 2], 'a line must be a Lambda Kinesis event or record object'],
  ])('refuses %s with a ReplayFileError naming the line', async (_, line, message) => {
    const { code, err } = await replayFile([line], uniqueName('rk').toLowerCase());
    expect(code).toBe(EXIT.error);
    expect(err).toContain('ReplayFileError');
    expect(err).toContain(message);
  });
});
