// The CDK variant of the service, as a CDK user runs it: the app (cdk/app.ts) synthesized into a
// cloud assembly, then `npx tidewater start --once --cdk-out <dir>` against local servers. start
// creates the stack's table and bucket, runs both stream mappings (TtlArchive's archive function,
// StreamProcessor's audit function) with their filters through Lambda's event source mapping
// rules, with each function's code taken from its asset in the assembly.
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { DeleteItemCommand, PutItemCommand, ScanCommand } from '@aws-sdk/client-dynamodb';
import { ListObjectsV2Command } from '@aws-sdk/client-s3';
import { marshall, type TtlDeleteRecord } from 'tidewater';
import { readArchive } from 'tidewater/archive';
import { useLocalAws } from 'tidewater/local/vitest';
import { beforeAll, expect, it } from 'vitest';
import { synthesizeOrdersApp } from '../cdk/app.js';

const local = useLocalAws();
const run = promisify(execFile);
// Its own assembly folder: cdk.test.ts synthesizes into cdk.out at the same time.
const assembly = path.join(process.cwd(), '.out', 'cdk-start.out');

beforeAll(async () => {
  await synthesizeOrdersApp(assembly);
}, 120_000);

/** `npx tidewater start --once --cdk-out <assembly>` on the test's servers; its log (stderr). */
async function start(): Promise<string> {
  const { dynamoEndpoint, s3Endpoint } = local.current;
  const { stderr } = await run(
    'npx',
    [
      'tidewater',
      'start',
      '--once',
      '--cdk-out',
      assembly,
      '--dynamodb-endpoint',
      dynamoEndpoint,
      '--s3-endpoint',
      s3Endpoint,
    ],
    { cwd: process.cwd(), env: process.env },
  );
  return stderr;
}

/** The name start gives a resource, from its log line `<LogicalId>  table|bucket  <name> …`. */
function named(log: string, kind: 'table' | 'bucket', logicalId: string): string {
  const name = new RegExp(`\\b${logicalId}\\w*\\s+${kind}\\s+(\\S+)`).exec(log)?.[1];
  if (!name) throw new Error(`no ${logicalId}… ${kind} in:\n${log}`);
  return name;
}

it('archives TTL-expired orders and audits user deletes from the CDK app, under tidewater start', async () => {
  const { dynamodb, s3 } = local.current;
  const first = await start();
  const table = named(first, 'table', 'OrdersTable');
  const bucket = named(first, 'bucket', 'ArchiveBucket');
  expect(first).toContain('(stream, TTL on expiresAt)');
  // Both mappings run, each with the filter its construct wrote.
  expect(first.match(/1 filter pattern, ReportBatchItemFailures, bisect/g)).toHaveLength(2);

  const past = Math.floor(Date.now() / 1000) - 3600;
  const expired = ['order-1', 'order-2', 'order-3'];
  for (const pk of expired)
    await dynamodb.send(
      new PutItemCommand({
        TableName: table,
        Item: marshall({ pk, expiresAt: past, totalMicros: 12345678901234567890123456789012345678n }),
      }),
    );
  await dynamodb.send(
    new PutItemCommand({ TableName: table, Item: marshall({ pk: 'live', expiresAt: past + 86_400 * 365 }) }),
  );
  await dynamodb.send(
    new PutItemCommand({ TableName: table, Item: marshall({ pk: 'cancelled', status: 'open' }) }),
  );
  await dynamodb.send(new DeleteItemCommand({ TableName: table, Key: marshall({ pk: 'cancelled' }) }));
  // DynamoDB Local's TTL sweep deletes the expired orders: a bounded wait for that state.
  for (const deadline = Date.now() + 90_000; ; ) {
    const { Count } = await dynamodb.send(new ScanCommand({ TableName: table }));
    if (Count === 1) break;
    if (Date.now() > deadline) throw new Error(`the TTL sweep left ${Count} items`);
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }

  const second = await start();
  expect(second).toMatch(/stopped: \d+ invocations?, 0 records discarded/);
  const archived: TtlDeleteRecord[] = [];
  for await (const record of readArchive({
    bucket,
    table,
    prefix: 'archive/',
    from: new Date(Date.now() - 2 * 3600_000),
    to: new Date(Date.now() + 3600_000),
    client: s3,
  }))
    archived.push(record as TtlDeleteRecord);
  expect(archived.map((r) => r.keys.pk).sort()).toEqual(expired);
  for (const record of archived) {
    expect(record.kind).toBe('ttl-delete');
    expect(record.oldImage?.totalMicros).toBe(12345678901234567890123456789012345678n);
  }
  const audit = await s3.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: 'audit/' }));
  expect(audit.KeyCount).toBe(1);
}, 300_000);
