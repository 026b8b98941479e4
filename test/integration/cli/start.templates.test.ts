import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { EXIT } from '../../../src/cli/exit-codes.js';
import { uniqueName } from '../../support/aws.js';
import { cliTestClients, runCli, startOnce } from '../../support/cli-test.js';
import {
  archivedOrders,
  bucketObjects,
  EXPIRED_ORDERS,
  ordersExpiredUnderStart,
} from '../../support/ttl-orders.js';

// One orders app described three ways — serverless.yml, a SAM template, a CDK app's cdk.out (two
// stacks, the function stack importing the storage stack's exports) — each a table whose stream
// feeds tidewater's archive handler and a custom-sink function. `tidewater start --once` runs each
// against the same local servers; DynamoDB Local's own TTL sweep makes the deletes.
const fixtures = join(import.meta.dirname, '..', '..', 'fixtures', 'apps');

/**
 * The cdk.out with its table as CDK's TableV2 synthesizes it: an AWS::DynamoDB::GlobalTable with
 * one replica in the stack's region (`Ref: AWS::Region`), the same stream and TTL.
 */
function tableV2CdkOut(): string {
  const dir = mkdtempSync(join(tmpdir(), 'tidewater-cdk-tablev2-'));
  const source = join(fixtures, 'cdk.out');
  cpSync(source, dir, { recursive: true });
  // Each asset stands for the fixture's own, imported afresh as it is (its imports are relative to it).
  for (const entry of readdirSync(source).filter((name) => name.startsWith('asset.'))) {
    const real = pathToFileURL(join(source, entry, 'index.mjs')).href;
    writeFileSync(
      join(dir, entry, 'index.mjs'),
      `const fresh = await import(${JSON.stringify(real)} + '?asset=' + crypto.randomUUID());\nexport const handler = fresh.handler;\n`,
    );
  }
  // A stack of its own name, so its table and bucket are not the CDK app's (one stage for all apps).
  const manifest = join(dir, 'manifest.json');
  writeFileSync(manifest, readFileSync(manifest, 'utf8').replaceAll('StorageStack', 'TableV2Stack'));
  rmSync(join(dir, 'StorageStack.template.json'));
  const file = join(dir, 'TableV2Stack.template.json');
  const template = JSON.parse(readFileSync(join(source, 'StorageStack.template.json'), 'utf8'));
  const table = template.Resources.OrdersTable315BB997;
  table.Type = 'AWS::DynamoDB::GlobalTable';
  table.Properties.Replicas = [{ Region: { Ref: 'AWS::Region' } }];
  writeFileSync(file, JSON.stringify(template));
  return dir;
}

const APPS = [
  {
    tool: 'serverless.yml',
    flag: ['-c', join(fixtures, 'serverless', 'serverless.yml')],
    archive: 'archive',
  },
  { tool: 'SAM', flag: ['--template', join(fixtures, 'sam', 'template.yaml')], archive: 'ArchiveFunction' },
  { tool: 'CDK', flag: ['--cdk-out', join(fixtures, 'cdk.out')], archive: 'ArchiveFunction9C1D5E3F' },
  { tool: 'CDK TableV2', flag: ['--cdk-out', tableV2CdkOut()], archive: 'ArchiveFunction9C1D5E3F' },
] as const;

const clients = cliTestClients();

describe('tidewater start --once for a SAM template and a cdk.out', () => {
  it('creates their resources, runs every mapping with its settings, and archives TTL deletes as the serverless.yml service does', async () => {
    const stage = uniqueName('t').toLowerCase();
    const now = Math.floor(Date.now() / 1000);
    // First run: resources created, handlers loaded with their environments, nothing to deliver.
    const apps = await ordersExpiredUnderStart(clients.dynamodb, APPS, {
      stage,
      now,
      check(app, log) {
        expect(log).toContain('(stream, TTL on expiresAt)');
        // The mapping's settings as the template states them, and its on-failure queue on the SQS server.
        expect(log).toMatch(
          new RegExp(
            `function ${app.archive} \\(.*\\) ← arn:aws:dynamodb:.*\\n.*batch 10, 1 filter pattern, ReportBatchItemFailures, bisect, retries 2, from TRIM_HORIZON; on failure: queue `,
          ),
        );
      },
    });

    const results = [];
    for (const app of apps) {
      const log = await startOnce(app.flag, stage);
      expect(log).toMatch(/stopped: \d+ invocations?, 0 records discarded/);
      const audited = (await bucketObjects(clients.s3, app.bucket, 'audit/')).map(
        ({ body }) => JSON.parse(Buffer.from(body).toString('utf8')) as unknown,
      );
      results.push({ tool: app.tool, archived: await archivedOrders(clients.s3, app.bucket), audited });
    }
    const [serverless, ...templates] = results;
    expect(serverless?.archived.map((row) => [row.kind, row.keys.pk?.S])).toEqual(
      EXPIRED_ORDERS.map((pk) => ['ttl-delete', pk]),
    );
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
      // No endpoints given: had it got that far, start would have launched its own servers.
      const { code, err: text } = await runCli([command as string, ...args, '--template', template]);
      expect(code).toBe(EXIT.error);
      expect(text).toContain(
        `TemplateReadError: ${template}: ArchiveFunction.Events.Expired.Properties.Stream: names Sessions, a table without a StreamSpecification`,
      );
      expect(text).not.toMatch(/DynamoDB|export AWS_|\(stage /);
    },
  );
});
