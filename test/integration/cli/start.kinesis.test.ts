import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  DeleteItemCommand,
  DescribeTableCommand,
  PutItemCommand,
  ScanCommand,
} from '@aws-sdk/client-dynamodb';
import { GetObjectCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
import { describe, expect, inject, it, vi } from 'vitest';
import { decodeArchiveObject } from '../../../src/archive.js';
import { EXIT } from '../../../src/cli/exit-codes.js';
import { main } from '../../../src/cli/program.js';
import { uniqueName } from '../../support/aws.js';
import { cliTestClients } from '../../support/cli-test.js';

// The orders app twice: its archive fed by the table's DynamoDB stream (../serverless) and by the
// table's Kinesis streaming destination (../serverless-kinesis: a `stream: type: kinesis` event on
// an AWS::Kinesis::Stream). `tidewater start --once` runs both on the same local servers, the
// Kinesis one with its own Kinesis server, the bridge and the Kinesis mapping.
const fixtures = join(import.meta.dirname, '..', '..', 'fixtures', 'apps');
const APPS = [
  { source: 'dynamodb', config: join(fixtures, 'serverless', 'serverless.yml') },
  { source: 'kinesis', config: join(fixtures, 'serverless-kinesis', 'serverless.yml') },
] as const;

const clients = cliTestClients();

async function run(args: string[]): Promise<{ code: number; log: string }> {
  const err: string[] = [];
  vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
  vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => {
    err.push(String(chunk));
    return true;
  });
  try {
    return { code: await main(args), log: err.join('') };
  } finally {
    vi.restoreAllMocks();
  }
}

async function start(config: string, stage: string): Promise<string> {
  const endpoints = ['--dynamodb-endpoint', inject('dynamoEndpoint'), '--s3-endpoint', inject('s3Endpoint')];
  const { code, log } = await run(['start', '--once', '-c', config, '--stage', stage, ...endpoints]);
  expect(code, log).toBe(EXIT.ok);
  return log;
}

function named(log: string, kind: 'table' | 'bucket', logicalId: string): string {
  const line = log.split('\n').find((l) => new RegExp(`^tidewater:\\s+${logicalId}\\s+${kind}\\s`).test(l));
  const name = line?.trim().split(/\s+/)[3];
  if (!name) throw new Error(`no ${kind} ${logicalId} in:\n${log}`);
  return name;
}

async function archivedRows(bucket: string) {
  const listed = await clients.s3.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: 'archive/' }));
  const rows = [];
  for (const { Key } of listed.Contents ?? []) {
    const got = await clients.s3.send(new GetObjectCommand({ Bucket: bucket, Key }));
    const body = (await got.Body?.transformToByteArray()) ?? new Uint8Array();
    rows.push(...decodeArchiveObject(body, Key as string));
  }
  return rows
    .map((row) => ({ kind: row.kind, keys: row.keys, oldImage: row.oldImage, ttl: row.ttl }))
    .sort((a, b) => String(a.keys.pk?.S).localeCompare(String(b.keys.pk?.S)));
}

describe('tidewater start --once with a stream: type: kinesis function', () => {
  it("archives TTL deletes through the table's Kinesis streaming destination as the DynamoDB stream path does", async () => {
    const stage = uniqueName('k').toLowerCase();
    const now = Math.floor(Date.now() / 1000);
    const apps = [];
    for (const app of APPS) {
      const log = await start(app.config, stage);
      const table = named(log, 'table', 'OrdersTable');
      const bucket = named(log, 'bucket', 'ArchiveBucket');
      apps.push({ ...app, table, bucket });
      if (app.source === 'kinesis') {
        // The template has no StreamSpecification: the bridge's DynamoDB stream is enabled locally.
        expect(log).toContain('(stream, Kinesis streaming destination, TTL on expiresAt)');
        expect(log).toMatch(/ChangeStream\s+Kinesis stream orders-kinesis-[\w-]+-ChangeStream/);
        expect(log).toContain('deployed but not emulated locally: ChangeStream.StreamEncryption');
        expect(log).toMatch(
          /function archive \(.*\) ← arn:aws:kinesis:us-east-1:\d{12}:stream\/orders-kinesis-[\w-]+-ChangeStream\n.*batch 10, 1 filter pattern, ReportBatchItemFailures, bisect, retries 2, from TRIM_HORIZON; on failure: queue /,
        );
        const described = await clients.dynamodb.send(new DescribeTableCommand({ TableName: table }));
        expect(described.Table?.StreamSpecification?.StreamViewType).toBe('NEW_AND_OLD_IMAGES');
      }
      for (let i = 0; i < 3; i++)
        await clients.dynamodb.send(
          new PutItemCommand({
            TableName: table,
            Item: {
              pk: { S: `ORDER#${i}` },
              expiresAt: { N: String(now - 3600 - i) },
              total: { N: '12345678901234567890123456789012345678' },
            },
          }),
        );
      await clients.dynamodb.send(
        new PutItemCommand({
          TableName: table,
          Item: { pk: { S: 'ORDER#live' }, expiresAt: { N: String(now + 86_400) } },
        }),
      );
      await clients.dynamodb.send(
        new PutItemCommand({
          TableName: table,
          Item: { pk: { S: 'ORDER#cancelled' }, note: { S: 'by hand' } },
        }),
      );
      await clients.dynamodb.send(
        new DeleteItemCommand({ TableName: table, Key: { pk: { S: 'ORDER#cancelled' } } }),
      );
    }
    // DynamoDB Local's TTL sweep deletes the expired items; the bound only turns a hang into a failure.
    for (const deadline = Date.now() + 240_000; ; ) {
      const left = await Promise.all(
        apps.map(
          async ({ table }) => (await clients.dynamodb.send(new ScanCommand({ TableName: table }))).Count,
        ),
      );
      if (left.every((count) => count === 1)) break;
      if (Date.now() > deadline) throw new Error(`TTL left ${left.join(', ')} items`);
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
    const results = [];
    for (const app of apps) {
      const log = await start(app.config, stage);
      expect(log).toMatch(/stopped: [1-9]\d* invocations?, 0 records discarded/);
      results.push(await archivedRows(app.bucket));
    }
    const [viaDynamoDbStream, viaKinesis] = results;
    expect(viaDynamoDbStream?.map((row) => [row.kind, row.keys.pk?.S])).toEqual([
      ['ttl-delete', 'ORDER#0'],
      ['ttl-delete', 'ORDER#1'],
      ['ttl-delete', 'ORDER#2'],
    ]);
    expect(viaKinesis).toEqual(viaDynamoDbStream);
  }, 400_000);

  it.each([
    [
      'a streaming destination naming a stream the app does not declare',
      [
        'StreamArn: !GetAtt ChangeStream.Arn',
        'StreamArn: arn:aws:kinesis:us-east-1:123456789012:stream/other',
      ],
      'OrdersTable.KinesisStreamSpecification.StreamArn: must name an AWS::Kinesis::Stream of the same resources',
    ],
    [
      'an unknown precision',
      ['MICROSECOND', 'NANOSECOND'],
      'must be MILLISECOND or MICROSECOND, got "NANOSECOND"',
    ],
    [
      'a shard count the local server cannot make',
      ['ShardCount: 2', 'ShardCount: 0'],
      'ChangeStream.ShardCount',
    ],
    [
      'an enhanced fan-out consumer',
      ['parallelizationFactor: 2', 'parallelizationFactor: 2\n          consumer: true'],
      'functions.archive.events[].stream.consumer: enhanced fan-out consumers are not emulated locally',
    ],
    [
      'AT_TIMESTAMP',
      ['startingPosition: TRIM_HORIZON', 'startingPosition: AT_TIMESTAMP'],
      'startingPosition must be TRIM_HORIZON or LATEST locally, got "AT_TIMESTAMP"',
    ],
  ])('refuses %s with a ServerlessConfigError, no server started', async (_, [from, to], message) => {
    const dir = mkdtempSync(join(tmpdir(), 'tidewater-bad-kinesis-'));
    const config = join(dir, 'serverless.yml');
    const source = readFileSync(APPS[1].config, 'utf8');
    expect(source).toContain(from);
    writeFileSync(config, source.replace(from as string, to as string));
    // No endpoints given: had it got that far, start would have launched its own servers.
    const { code, log } = await run(['start', '--once', '-c', config]);
    expect(code).toBe(EXIT.error);
    expect(log).toContain('ServerlessConfigError');
    expect(log).toContain(message);
    expect(log).not.toMatch(/DynamoDB|Kinesis {3}http|\(stage /);
  });
});
