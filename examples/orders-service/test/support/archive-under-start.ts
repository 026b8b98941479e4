// What the SAM and CDK variants of the service prove the same way: `npx tidewater start --once`
// with the tool's flag creates the table and bucket, DynamoDB Local's own TTL sweep deletes the
// expired orders, a second start delivers the stream, and the archive holds each TTL delete
// losslessly while the user delete lands in the audit trail.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { DeleteItemCommand, PutItemCommand, ScanCommand } from '@aws-sdk/client-dynamodb';
import { ListObjectsV2Command } from '@aws-sdk/client-s3';
import { marshall, type TtlDeleteRecord } from 'tidewater';
import { readArchive } from 'tidewater/archive';
import type { LocalAws } from 'tidewater/local';
import { expect } from 'vitest';

const run = promisify(execFile);

/** `npx tidewater start --once <appFlags…>` on the test's servers; its log (stderr). */
async function start(appFlags: readonly string[], servers: LocalAws): Promise<string> {
  const { stderr } = await run(
    'npx',
    [
      'tidewater',
      'start',
      '--once',
      ...appFlags,
      '--dynamodb-endpoint',
      servers.dynamoEndpoint,
      '--s3-endpoint',
      servers.s3Endpoint,
    ],
    { cwd: process.cwd(), env: process.env },
  );
  return stderr;
}

/** The name start gives a resource, from its log line `<LogicalId…>  table|bucket  <name> …`. */
function named(log: string, kind: 'table' | 'bucket', logicalId: string): string {
  const name = new RegExp(`\\b${logicalId}\\w*\\s+${kind}\\s+(\\S+)`).exec(log)?.[1];
  if (!name) throw new Error(`no ${logicalId}… ${kind} in:\n${log}`);
  return name;
}

/**
 * Runs the app under start twice around DynamoDB Local's TTL sweep and checks the archive and the
 * audit trail; `checkFirstLog` asserts what the first start printed about the app's mappings.
 */
export async function archivesUnderStart(
  appFlags: readonly string[],
  servers: LocalAws,
  checkFirstLog: (log: string) => void,
): Promise<void> {
  const { dynamodb, s3 } = servers;
  const first = await start(appFlags, servers);
  const table = named(first, 'table', 'OrdersTable');
  const bucket = named(first, 'bucket', 'ArchiveBucket');
  expect(first).toContain('(stream, TTL on expiresAt)');
  checkFirstLog(first);

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

  const second = await start(appFlags, servers);
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
}
