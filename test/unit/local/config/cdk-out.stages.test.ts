// A CDK app organised as its teams write it — Stages (nested cloud assemblies) and nested stacks —
// synthesized with aws-cdk-lib itself, then read as `tidewater start --cdk-out` reads it.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App, CfnOutput, NestedStack, Stack, Stage } from 'aws-cdk-lib';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { DynamoEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import { afterAll, describe, expect, it } from 'vitest';
import { readCdkOut } from '../../../../src/local/config/cdk-out.js';
import { TemplateReadError } from '../../../../src/local/config/errors.js';

const work = mkdtempSync(join(tmpdir(), 'tidewater-cdk-stages-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));
const code = join(work, 'code');
mkdirSync(code);
writeFileSync(join(code, 'index.mjs'), 'export const handler = async () => ({ batchItemFailures: [] });\n');

/**
 * Stages `names`, each with a table, an archive function on its stream, and a nested stack whose
 * worker reads the same stream (the table's stream ARN passed in as a parameter) and whose name
 * the parent's function gets from the nested stack's output.
 */
function synth(names: readonly string[], assetMetadata: boolean, extra?: (app: App) => void): string {
  const outdir = join(work, `${names.join('-')}-${assetMetadata}-${extra === undefined ? '' : 'extra'}`);
  const app = new App({ outdir, context: { 'aws:cdk:enable-asset-metadata': assetMetadata } });
  extra?.(app);
  for (const name of names) {
    // `Prod/Eu`: a stage Eu inside a stage Prod.
    const [outer, inner] = name.split('/') as [string, string | undefined];
    const outerStage = (app.node.tryFindChild(outer) as Stage | undefined) ?? new Stage(app, outer);
    const stack = new Stack(inner === undefined ? outerStage : new Stage(outerStage, inner), 'Orders');
    const table = new dynamodb.Table(stack, 'Table', {
      partitionKey: { name: 'pk', type: dynamodb.AttributeType.STRING },
      stream: dynamodb.StreamViewType.NEW_AND_OLD_IMAGES,
    });
    const workers = new NestedStack(stack, 'Workers');
    const worker = new lambda.Function(workers, 'Worker', {
      runtime: lambda.Runtime.NODEJS_22_X,
      handler: 'index.handler',
      code: lambda.Code.fromAsset(code),
    });
    worker.addEventSource(new DynamoEventSource(table, { startingPosition: lambda.StartingPosition.LATEST }));
    new CfnOutput(workers, 'WorkerName', { value: worker.functionName });
    const archive = new lambda.Function(stack, 'Archive', {
      runtime: lambda.Runtime.NODEJS_22_X,
      handler: 'index.handler',
      code: lambda.Code.fromAsset(code),
      environment: { WORKER: worker.functionName },
    });
    archive.addEventSource(
      new DynamoEventSource(table, { startingPosition: lambda.StartingPosition.TRIM_HORIZON, batchSize: 10 }),
    );
  }
  app.synth();
  return outdir;
}

function readError(dir: string, stage?: string): TemplateReadError {
  try {
    readCdkOut(dir, stage);
  } catch (error) {
    if (error instanceof TemplateReadError) return error;
    throw error;
  }
  throw new Error(`${dir} was read without an error`);
}

describe('readCdkOut: CDK Stages and nested stacks', () => {
  it.each([
    ['with asset metadata (cdk synth)', true],
    ['without (Code.S3Key and the asset manifest)', false],
  ])('reads the stage --stage names, its nested stack included: %s', (_, metadata) => {
    const out = synth(['Dev', 'Prod'], metadata);
    const app = readCdkOut(out, 'Prod');
    const fnOf = (prefix: string) => {
      const fn = app.functions.find((f) => f.key.startsWith(prefix));
      if (fn === undefined) throw new Error(`no function ${prefix}… in ${app.functions.map((f) => f.key)}`);
      return fn;
    };
    const archive = fnOf('Archive');
    const worker = fnOf('Worker');
    const tableId = Object.keys(app.resources).find(
      (id) => app.resources[id]?.Type === 'AWS::DynamoDB::Table',
    );
    expect(tableId).toMatch(/^Table/);
    // Both mappings read the Prod stage's one table; the nested one through the parameter its parent passes.
    for (const fn of [archive, worker]) {
      expect(fn.stream.arn).toEqual({ 'Fn::GetAtt': [tableId, 'StreamArn'] });
      // CDK stages the code once, in the app's top assembly, whichever stage uses it.
      expect(fn.handlerModule.startsWith(join(out, 'asset.'))).toBe(true);
      expect(fn.handlerModule.endsWith('index')).toBe(true);
    }
    expect(archive.stream).toMatchObject({ startingPosition: 'TRIM_HORIZON', batchSize: 10 });
    expect(worker.stream).toMatchObject({ startingPosition: 'LATEST' });
    // The parent's reference to the nested stack's output is the worker function itself.
    expect(archive.environment.WORKER).toEqual({ Ref: worker.key });
    // Local names come from the stage's stack, never a nested stack's path.
    expect(app.name).toMatch(/^ProdOrders[0-9A-F]{8}$/);
  });

  it('reads an app with one stage without being told which', () => {
    const app = readCdkOut(synth(['Only'], true));
    expect(app.functions.map((f) => f.key.replace(/[0-9A-F]{8}$/, '')).sort()).toEqual(['Archive', 'Worker']);
  });

  it('reads a stage in a stage by its path, and a named stage beside stacks of the app itself', () => {
    const out = synth(['Dev', 'Prod/Eu'], true, (app) => {
      new Stack(app, 'Shared').node.addMetadata('purpose', 'a stack at the top');
    });
    expect(readCdkOut(out, 'Prod/Eu').name).toMatch(/^ProdEuOrders[0-9A-F]{8}$/);
    expect(readCdkOut(out, 'Dev').name).toMatch(/^DevOrders[0-9A-F]{8}$/);
    // Without a stage named, the app's own stacks are what is read; Shared has no mapping.
    expect(readError(out).property).toBe('Resources');
  });

  it('refuses to guess between several stages, naming each and how to pick it', () => {
    const out = synth(['Dev', 'Prod'], true);
    const error = readError(out, 'local');
    expect(error.property).toBe('artifacts');
    expect(error.message).toContain('holds the CDK stages Dev, Prod');
    expect(error.message).toContain('--stage Dev or --stage Prod');
    expect(error.message).toContain('assembly-Dev');
  });
});
