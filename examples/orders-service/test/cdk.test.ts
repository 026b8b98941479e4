// The CDK app (cdk/app.ts) synthesized as `cdk synth` would, into cdk.out, from the installed
// tidewater/cdk: both functions on the orders table's stream with their filters, their code as
// assets, and a template cfn-lint finds no error in.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { expect, it } from 'vitest';
import { synthesizeOrdersApp } from '../cdk/app.js';

interface Resource {
  Type: string;
  Properties: Record<string, unknown>;
}

it('synthesizes the CDK app into cdk.out, a template cfn-lint finds no error in', async () => {
  const outdir = path.join(process.cwd(), 'cdk.out');
  const file = await synthesizeOrdersApp(outdir);
  const template = JSON.parse(readFileSync(file, 'utf8')) as { Resources: Record<string, Resource> };
  const of = (type: string) => Object.values(template.Resources).filter((r) => r.Type === type);

  const filters = of('AWS::Lambda::EventSourceMapping').map((m) => m.Properties.FilterCriteria);
  expect(filters).toEqual([
    { Filters: [{ Pattern: expect.stringContaining('"principalId":["dynamodb.amazonaws.com"]') }] },
    { Filters: [{ Pattern: expect.stringContaining('"anything-but":["dynamodb.amazonaws.com"]') }] },
  ]);
  expect(of('AWS::Lambda::Function').map((f) => f.Properties.Runtime)).toEqual(['nodejs22.x', 'nodejs22.x']);
  // Each function's code is a bundled asset in cdk.out.
  const assets = JSON.parse(readFileSync(path.join(outdir, 'OrdersService.assets.json'), 'utf8')) as {
    files: Record<string, { source: { path: string } }>;
  };
  const bundles = Object.values(assets.files)
    .map((f) => path.join(outdir, f.source.path, 'index.mjs'))
    .filter(existsSync);
  expect(bundles).toHaveLength(2);

  const lint = spawnSync('cfn-lint', ['--format', 'json', file], { encoding: 'utf8', timeout: 240_000 });
  expect(lint.error, 'cfn-lint on PATH').toBeUndefined();
  const errors = (
    JSON.parse(lint.stdout) as { Level: string; Rule: { Id: string }; Message: string }[]
  ).filter((f) => f.Level === 'Error');
  expect(errors.map((f) => `${f.Rule.Id}: ${f.Message}`)).toEqual([]);
}, 240_000);
