// The service's own deploy toolchain: osls (the maintained continuation of serverless v3) packages
// serverless.yml with serverless-esbuild, offline, and the template carries the stream settings.
import { execFile } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, expect, it } from 'vitest';

const run = promisify(execFile);
const require = createRequire(import.meta.url);
const out = await mkdtemp(join(tmpdir(), 'orders-package-'));

afterAll(() => rm(out, { recursive: true, force: true }));

interface Resource {
  Type: string;
  Properties: Record<string, unknown>;
}

it('packages with osls offline, without a warning, the mapping settings in the template', async () => {
  // No credentials and no profile: packaging must not need an AWS account.
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('AWS_')));
  const osls = require.resolve('osls/bin/serverless.js');
  const { stdout, stderr } = await run(
    process.execPath,
    [osls, 'package', '--package', out, '--stage', 'test'],
    {
      env: { ...env, AWS_EC2_METADATA_DISABLED: 'true', CI: '1' },
      timeout: 240_000,
    },
  );
  const output = `${stdout}\n${stderr}`;
  expect(output).toContain('Service packaged');
  expect(output).not.toMatch(/warning|deprecat/i);

  const template = JSON.parse(
    await readFile(join(out, 'cloudformation-template-update-stack.json'), 'utf8'),
  ) as {
    Resources: Record<string, Resource>;
  };
  const of = (type: string) => Object.values(template.Resources).filter((r) => r.Type === type);
  const [fn] = of('AWS::Lambda::Function');
  expect(fn?.Properties).toMatchObject({ Runtime: 'nodejs22.x', Handler: 'src/handlers/archive.handler' });
  const [mapping] = of('AWS::Lambda::EventSourceMapping');
  expect(mapping?.Properties).toMatchObject({
    BatchSize: 100,
    StartingPosition: 'TRIM_HORIZON',
    FunctionResponseTypes: ['ReportBatchItemFailures'],
    BisectBatchOnFunctionError: true,
    MaximumRetryAttempts: 3,
    FilterCriteria: { Filters: [{ Pattern: JSON.stringify({ eventName: ['REMOVE'] }) }] },
  });
  // One zip for the service (serverless.yml does not package functions individually).
  expect((await readdir(out)).filter((f) => f.endsWith('.zip'))).toEqual(['orders-service.zip']);
});
