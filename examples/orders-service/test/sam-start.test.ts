// The SAM variant of the service, as a SAM user runs it: `npx tidewater start --once --template
// template.yaml` against local servers. start creates the template's table and bucket, runs the
// DynamoDB event through Lambda's event source mapping rules into src/handlers/archive.ts, and the
// TTL deletes DynamoDB Local's own sweep makes are read back from the archive.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { DeleteItemCommand, PutItemCommand, ScanCommand } from '@aws-sdk/client-dynamodb';
import { ListObjectsV2Command } from '@aws-sdk/client-s3';
import { marshall, type TtlDeleteRecord } from 'tidewater';
import { readArchive } from 'tidewater/archive';
import { useLocalAws } from 'tidewater/local/vitest';
import { expect, it } from 'vitest';

const local = useLocalAws();
const run = promisify(execFile);

/** `npx tidewater start --once --template template.yaml` on the test's servers; its log (stderr). */
async function start(): Promise<string> {
  const { dynamoEndpoint, s3Endpoint } = local.current;
  const { stderr } = await run(
    'npx',
    [
      'tidewater',
      'start',
      '--once',
      '--template',
      'template.yaml',
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
function named(log: string, logicalId: string): string {
  const name = new RegExp(`\\b${logicalId}\\s+(?:table|bucket)\\s+(\\S+)`).exec(log)?.[1];
  if (!name) throw new Error(`no ${logicalId} in:\n${log}`);
  return name;
}

it('archives TTL-expired orders and audits user deletes from the SAM template, under tidewater start', async () => {
  const { dynamodb, s3 } = local.current;
  const first = await start();
  const table = named(first, 'OrdersTable');
  const bucket = named(first, 'ArchiveBucket');
  expect(first).toContain('(stream, TTL on expiresAt)');
  expect(first).toMatch(
    /batch 100, 1 filter pattern, ReportBatchItemFailures, bisect, retries 3, from TRIM_HORIZON/,
  );

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
