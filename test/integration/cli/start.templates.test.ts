import { cpSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DeleteItemCommand, PutItemCommand, ScanCommand } from '@aws-sdk/client-dynamodb';
import { GetObjectCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
import { describe, expect, inject, it, vi } from 'vitest';
import { decodeArchiveObject } from '../../../src/archive.js';
import { EXIT } from '../../../src/cli/exit-codes.js';
import { main } from '../../../src/cli/program.js';
import { uniqueName } from '../../support/aws.js';
import { cliTestClients } from '../../support/cli-test.js';

// One orders app described three ways — serverless.yml, a SAM template, a CDK app's cdk.out (two
// stacks, the function stack importing the storage stack's exports) — each a table whose stream
// feeds tidewater's archive handler and a custom-sink function. `tidewater start --once` runs each
// against the same local servers; DynamoDB Local's own TTL sweep makes the deletes.
const fixtures = join(import.meta.dirname, '..', '..', 'fixtures', 'apps');
const APPS = [
  {
    tool: 'serverless.yml',
    flag: ['-c', join(fixtures, 'serverless', 'serverless.yml')],
    archive: 'archive',
  },
  { tool: 'SAM', flag: ['--template', join(fixtures, 'sam', 'template.yaml')], archive: 'ArchiveFunction' },
  { tool: 'CDK', flag: ['--cdk-out', join(fixtures, 'cdk.out')], archive: 'ArchiveFunction9C1D5E3F' },
] as const;

const clients = cliTestClients();

async function start(app: (typeof APPS)[number], stage: string): Promise<string> {
  const err: string[] = [];
  vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
  vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => {
    err.push(String(chunk));
    return true;
  });
  const endpoints = ['--dynamodb-endpoint', inject('dynamoEndpoint'), '--s3-endpoint', inject('s3Endpoint')];
  try {
    const code = await main(['start', '--once', ...app.flag, '--stage', stage, ...endpoints]);
    expect(code, err.join('')).toBe(EXIT.ok);
  } finally {
    vi.restoreAllMocks();
  }
  return err.join('');
}

/** The name a start log gives a resource: `  <LogicalId>   table  <name> (…)`. */
function named(log: string, kind: 'table' | 'bucket', logicalId: RegExp): string {
  const line = log
    .split('\n')
    .find((l) => new RegExp(`^tidewater:\\s+${logicalId.source}\\s+${kind}\\s`).test(l));
  const name = line?.trim().split(/\s+/)[3];
  if (!name) throw new Error(`no ${kind} ${logicalId} in:\n${log}`);
  return name;
}

async function objects(bucket: string, prefix: string): Promise<{ key: string; body: Uint8Array }[]> {
  const listed = await clients.s3.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix }));
  return Promise.all(
    (listed.Contents ?? []).map(async ({ Key }) => {
      const got = await clients.s3.send(new GetObjectCommand({ Bucket: bucket, Key }));
      return { key: Key as string, body: (await got.Body?.transformToByteArray()) ?? new Uint8Array() };
    }),
  );
}

describe('tidewater start --once for a SAM template and a cdk.out', () => {
  it('creates their resources, runs every mapping with its settings, and archives TTL deletes as the serverless.yml service does', async () => {
    const stage = uniqueName('t').toLowerCase();
    const now = Math.floor(Date.now() / 1000);
    const apps = [];
    // First run: resources created, handlers loaded with their environments, nothing to deliver.
    for (const app of APPS) {
      const log = await start(app, stage);
      const table = named(log, 'table', /OrdersTable\w*/);
      const bucket = named(log, 'bucket', /ArchiveBucket\w*/);
      expect(log).toContain('(stream, TTL on expiresAt)');
      // The mapping's settings as the template states them, and its on-failure queue on the SQS server.
      expect(log).toMatch(
        new RegExp(
          `function ${app.archive} \\(.*\\) ← arn:aws:dynamodb:.*\\n.*batch 10, 1 filter pattern, ReportBatchItemFailures, bisect, retries 2, from TRIM_HORIZON; on failure: queue `,
        ),
      );
      apps.push({ ...app, table, bucket });
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
    // DynamoDB Local's TTL sweep deletes the expired items (pages of 20, 10 s apart); the bound
    // only turns a hang into a failure.
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
      const log = await start(app, stage);
      expect(log).toMatch(/stopped: \d+ invocations?, 0 records discarded/);
      const archived = (await objects(app.bucket, 'archive/')).flatMap(({ key, body }) =>
        decodeArchiveObject(body, key),
      );
      const audited = (await objects(app.bucket, 'audit/')).map(
        ({ body }) => JSON.parse(Buffer.from(body).toString('utf8')) as unknown,
      );
      results.push({
        tool: app.tool,
        archived: archived
          .map((row) => ({ kind: row.kind, keys: row.keys, oldImage: row.oldImage, ttl: row.ttl }))
          .sort((a, b) => String(a.keys.pk?.S).localeCompare(String(b.keys.pk?.S))),
        audited,
      });
    }
    const [serverless, ...templates] = results;
    expect(serverless?.archived.map((row) => [row.kind, row.keys.pk?.S])).toEqual([
      ['ttl-delete', 'ORDER#0'],
      ['ttl-delete', 'ORDER#1'],
      ['ttl-delete', 'ORDER#2'],
    ]);
    expect(serverless?.archived[0]?.oldImage?.total).toEqual({ N: '12345678901234567890123456789012345678' });
    expect(serverless?.audited).toEqual([
      {
        keys: { pk: { S: 'ORDER#cancelled' } },
        oldImage: { pk: { S: 'ORDER#cancelled' }, note: { S: 'by hand' } },
      },
    ]);
    // The template runs archive and audit exactly what the serverless.yml service does.
    for (const result of templates) expect({ ...result, tool: serverless?.tool }).toEqual(serverless);
  }, 400_000);

  it.each([
    ['start', ['--once']],
    ['replay', ['events.jsonl', '--aws']],
  ])(
    '%s with a template that cannot run: the TemplateReadError, and no server started',
    async (command, args) => {
      // The unit fixture's SAM app, its stream pointed at a table without a stream.
      const dir = mkdtempSync(join(tmpdir(), 'tidewater-bad-template-'));
      cpSync(join(import.meta.dirname, '..', '..', 'unit', 'local', 'config', 'fixtures', 'sam'), dir, {
        recursive: true,
      });
      const template = join(dir, 'template.yaml');
      writeFileSync(
        template,
        readFileSync(template, 'utf8').replace('!GetAtt OrdersTable.StreamArn', '!GetAtt Sessions.StreamArn'),
      );
      const err: string[] = [];
      vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
      vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => {
        err.push(String(chunk));
        return true;
      });
      // No endpoints given: had it got that far, start would have launched its own servers.
      expect(await main([command as string, ...args, '--template', template])).toBe(EXIT.error);
      const text = err.join('');
      expect(text).toContain(
        `TemplateReadError: ${template}: ArchiveFunction.Events.Expired.Properties.Stream: names Sessions, a table without a StreamSpecification`,
      );
      expect(text).not.toMatch(/DynamoDB|export AWS_|\(stage /);
    },
  );
});
