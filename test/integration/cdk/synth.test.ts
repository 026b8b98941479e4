// An app using every construct, synthesized as `cdk synth` would (app.synth() into an outdir, the
// handlers' code as file assets), and the template checked by cfn-lint against CloudFormation's
// resource specification: no errors.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as s3 from 'aws-cdk-lib/aws-s3';
import { App, Stack } from 'aws-cdk-lib/core';
import { afterAll, expect, it } from 'vitest';
import { StreamProcessor, TtlArchive, VoteAggregator } from '../../../src/cdk.js';
import { userDeletes } from '../../../src/filters/ready-made.js';

const work = mkdtempSync(path.join(tmpdir(), 'tidewater-cdk-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

interface Finding {
  Level: string;
  Rule: { Id: string };
  Message: string;
  Location: { Path: (string | number)[] };
}

function synthesize(outdir: string): string {
  const handlerDir = path.join(work, 'handler');
  // The asset's content does not matter to the template; a real bundle would sit here.
  mkdirSync(handlerDir, { recursive: true });
  writeFileSync(
    path.join(handlerDir, 'index.mjs'),
    'export const handler = async () => ({ batchItemFailures: [] });\n',
  );
  const app = new App({ outdir });
  const stack = new Stack(app, 'Orders', { env: { region: 'eu-west-1' } });
  const key = new kms.Key(stack, 'Key', { enableKeyRotation: true });
  const table = new dynamodb.Table(stack, 'Table', {
    partitionKey: { name: 'pk', type: dynamodb.AttributeType.STRING },
    sortKey: { name: 'sk', type: dynamodb.AttributeType.STRING },
    billingMode: dynamodb.BillingMode.PAY_PER_REQUEST,
    stream: dynamodb.StreamViewType.NEW_AND_OLD_IMAGES,
    timeToLiveAttribute: 'expiresAt',
    encryption: dynamodb.TableEncryption.CUSTOMER_MANAGED,
    encryptionKey: key,
  });
  const code = lambda.Code.fromAsset(handlerDir);
  const archive = new TtlArchive(stack, 'Archive', {
    table,
    function: { code },
    encryptionKey: key,
    // The change log, and with queryTables its tables over <archivePrefix>changes/.
    routes: 'every-change',
    compaction: { function: { code } },
    queryTables: { databaseName: 'orders_archive', formats: ['ndjson', 'parquet'] },
  });
  const failures = new s3.Bucket(stack, 'Failures', {
    encryption: s3.BucketEncryption.S3_MANAGED,
    enforceSSL: true,
    blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
  });
  const audit = new StreamProcessor(stack, 'Audit', {
    table,
    function: { code, environment: { AUDIT_PREFIX: 'audit/' } },
    filters: [userDeletes()],
    onFailure: failures,
  });
  archive.grantPutObjects(audit.function, 'audit/');
  new VoteAggregator(stack, 'Votes', { table, function: { code }, poll: 'default' });
  app.synth();
  return path.join(outdir, 'Orders.template.json');
}

it('synthesizes an app with every construct into a template cfn-lint finds no error in', () => {
  const outdir = path.join(work, 'cdk.out');
  const file = synthesize(outdir);
  const template = JSON.parse(readFileSync(file, 'utf8')) as { Resources: Record<string, { Type: string }> };
  const types = Object.values(template.Resources).map((r) => r.Type);
  expect(types.filter((t) => t === 'AWS::Lambda::EventSourceMapping')).toHaveLength(2);
  expect(types.filter((t) => t === 'AWS::Events::Rule')).toHaveLength(2);
  // The TTL archive and the change log, each NDJSON and Parquet; a view per NDJSON table.
  expect(types.filter((t) => t === 'AWS::Glue::Table')).toHaveLength(4);
  expect(types.filter((t) => t === 'AWS::Athena::NamedQuery')).toHaveLength(2);
  // The handlers' code is a file asset in cdk.out, as the CDK CLI would upload it.
  const assets = JSON.parse(readFileSync(path.join(outdir, 'Orders.assets.json'), 'utf8')) as {
    files: Record<string, { source: { path: string } }>;
  };
  const sources = Object.values(assets.files).map((f) => f.source.path);
  expect(sources.some((p) => p.startsWith('asset.') && existsSync(path.join(outdir, p, 'index.mjs')))).toBe(
    true,
  );

  const lint = spawnSync('cfn-lint', ['--format', 'json', file], { encoding: 'utf8', timeout: 240_000 });
  expect(lint.error, 'cfn-lint on PATH').toBeUndefined();
  const findings = JSON.parse(lint.stdout) as Finding[];
  const errors = findings.filter((f) => f.Level === 'Error');
  expect(errors.map((f) => `${f.Rule.Id} ${f.Location.Path.join('/')}: ${f.Message}`)).toEqual([]);
}, 300_000);
