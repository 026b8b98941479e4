// The same service deployed with the AWS CDK instead of serverless.yml: the orders table's stream
// feeds the archive function (tidewater's TtlArchive: TTL deletes to S3, Glacier lifecycle, dead
// letters, alarms) and the audit function, a custom sink on user deletes (tidewater's
// StreamProcessor). The handlers are bundled with build.mjs into the folders the assets point at.
//
// `synthesizeOrdersApp()` writes cdk.out as `cdk synth` does; run this file (e.g. `npx tsx
// cdk/app.ts`) or point cdk.json's "app" at it to deploy with the CDK CLI.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { App, Stack } from 'aws-cdk-lib/core';
import { userDeletes } from 'tidewater';
import { StreamProcessor, TtlArchive } from 'tidewater/cdk';
import { bundleHandler } from '../build.mjs';

const service = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** Bundles a handler into `.out/cdk/<name>/index.mjs`; the folder is the function's asset. */
async function handlerCode(name: string): Promise<lambda.Code> {
  const dir = path.join(service, '.out', 'cdk', name);
  await bundleHandler(path.join(service, 'src', 'handlers', `${name}.ts`), path.join(dir, 'index.mjs'));
  return lambda.Code.fromAsset(dir);
}

export async function ordersApp(outdir: string): Promise<App> {
  const [archiveCode, auditCode] = await Promise.all([handlerCode('archive'), handlerCode('audit')]);
  const app = new App({ outdir });
  const stack = new Stack(app, 'OrdersService');
  const table = new dynamodb.Table(stack, 'OrdersTable', {
    partitionKey: { name: 'pk', type: dynamodb.AttributeType.STRING },
    billingMode: dynamodb.BillingMode.PAY_PER_REQUEST,
    stream: dynamodb.StreamViewType.NEW_AND_OLD_IMAGES,
    timeToLiveAttribute: 'expiresAt',
  });
  const archive = new TtlArchive(stack, 'Archive', {
    table,
    function: { code: archiveCode, environment: { AUDIT_PREFIX: 'audit/' } },
    ttlAttribute: 'expiresAt',
    storageClass: 'GLACIER_IR',
    stream: { retryAttempts: 3 },
  });
  const audit = new StreamProcessor(stack, 'Audit', {
    table,
    function: {
      code: auditCode,
      environment: { ARCHIVE_BUCKET: archive.bucket.bucketName, AUDIT_PREFIX: 'audit/' },
    },
    filters: [userDeletes()],
  });
  archive.grantPutObjects(audit.function, 'audit/');
  return app;
}

/** Synthesizes the app into `outdir`; returns the stack's template file. */
export async function synthesizeOrdersApp(outdir = path.join(service, 'cdk.out')): Promise<string> {
  (await ordersApp(outdir)).synth();
  return path.join(outdir, 'OrdersService.template.json');
}

if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  process.stdout.write(`${await synthesizeOrdersApp()}\n`);
}
