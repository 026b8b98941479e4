// biome-ignore-all lint/suspicious/noTemplateCurlyInString: serverless variables and generated TypeScript, not template literals
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { expect, inject, it } from 'vitest';
import { streamEvents } from '../../../src/local/emulator/events.js';

const run = promisify(execFile);
const builtCli = join(process.cwd(), 'dist', 'cli', 'bin.js');

/**
 * A service folder as a user has one: package.json, the service's own esbuild, serverless.yml (its
 * lines given), functions/, and the endpoints file `tidewater start --write-env` writes (local.env).
 */
async function typescriptService(name: string, serverlessYaml: string[]): Promise<string> {
  // What a user runs: the compiled CLI (`npx tidewater`), which cannot import TypeScript itself.
  expect(existsSync(builtCli), `${builtCli} is missing: run \`npm run build\``).toBe(true);
  const dir = await mkdtemp(join(tmpdir(), `tidewater-${name}-`));
  await writeFile(join(dir, 'package.json'), `{ "name": "${name}", "type": "module" }\n`);
  await mkdir(join(dir, 'node_modules'));
  await symlink(
    dirname(fileURLToPath(import.meta.resolve('esbuild/package.json'))),
    join(dir, 'node_modules', 'esbuild'),
  );
  await writeFile(join(dir, 'serverless.yml'), [`service: ${name}`, ...serverlessYaml, ''].join('\n'));
  await mkdir(join(dir, 'functions'));
  await writeFile(
    join(dir, 'local.env'),
    `AWS_ENDPOINT_URL_DYNAMODB=${inject('dynamoEndpoint')}\nAWS_ENDPOINT_URL_S3=${inject('s3Endpoint')}\n`,
  );
  return dir;
}

it("the built CLI replays through a TypeScript handler outside src/, compiled with the service's esbuild, with serverless.yml's environment", async () => {
  const dir = await typescriptService('ts-service', [
    'provider:',
    '  name: aws',
    '  environment:',
    '    GREETING: hello',
    'functions:',
    '  count:',
    '    handler: functions/count.handler',
    '    environment:',
    '      TARGET: ${sls:stage}-target',
    '    events:',
    '      - stream:',
    '          arn: arn:aws:dynamodb:us-east-1:123456789012:table/t/stream/2026-01-01T00:00:00.000',
    '          maximumRetryAttempts: 1',
  ]);
  const seen = join(dir, 'seen.json');
  await writeFile(
    join(dir, 'functions', 'names.ts'),
    'export const keysOf = (r: { dynamodb: { Keys: Record<string, { S: string }> } }): string => r.dynamodb.Keys.pk!.S;\n',
  );
  await writeFile(
    join(dir, 'functions', 'count.ts'),
    [
      "import { writeFileSync } from 'node:fs';",
      "import { keysOf } from './names.js';",
      'interface Event { Records: Parameters<typeof keysOf>[0][] }',
      'const greeting: string = process.env.GREETING ?? "unset";',
      'export const handler = async (event: Event): Promise<{ batchItemFailures: never[] }> => {',
      `  writeFileSync(${JSON.stringify(seen)}, JSON.stringify({ greeting, target: process.env.TARGET, keys: event.Records.map(keysOf) }));`,
      '  return { batchItemFailures: [] };',
      '};',
      '',
    ].join('\n'),
  );
  const build = streamEvents({ tableName: 't' });
  await writeFile(
    join(dir, 'events.jsonl'),
    `${JSON.stringify({ Records: [build.insert({ pk: 'x' }), build.insert({ pk: 'y' })] })}\n`,
  );

  const { stdout, stderr } = await run(
    process.execPath,
    [builtCli, 'replay', 'events.jsonl', '--no-progress', '--local-env', 'local.env'],
    { cwd: dir },
  );
  expect(stdout).toMatch(/2 records replayed; 0 on-failure records/);
  // It says where requests go before it starts.
  expect(stderr).toContain(`dynamodb: ${inject('dynamoEndpoint')}`);
  expect(stderr).toContain(`s3: ${inject('s3Endpoint')}`);
  expect(JSON.parse(await readFile(seen, 'utf8'))).toEqual({
    greeting: 'hello',
    target: 'local-target',
    keys: ['x', 'y'],
  });
  // Compiled under the service's .tidewater/, and removed once imported.
  expect(await readdir(join(dir, '.tidewater', 'handlers'))).toEqual([]);
});

it("a TypeScript handler's stack under the built CLI names its own .ts lines, without NODE_OPTIONS", async () => {
  const dir = await typescriptService('ts-stack', [
    'provider:',
    '  name: aws',
    'functions:',
    '  fail:',
    '    handler: functions/fail.handler',
    '    events:',
    '      - stream:',
    '          arn: arn:aws:dynamodb:us-east-1:123456789012:table/t/stream/2026-01-01T00:00:00.000',
  ]);
  const seen = join(dir, 'stack.txt');
  await writeFile(
    join(dir, 'functions', 'fail.ts'),
    [
      "import { writeFileSync } from 'node:fs';",
      'type Empty = { batchItemFailures: never[] };',
      'export const handler = async (): Promise<Empty> => {',
      "  const error: Error = new Error('where');",
      `  writeFileSync(${JSON.stringify(seen)}, error.stack ?? '');`,
      '  return { batchItemFailures: [] };',
      '};',
      '',
    ].join('\n'),
  );
  const build = streamEvents({ tableName: 't' });
  await writeFile(join(dir, 'events.jsonl'), `${JSON.stringify({ Records: [build.insert({ pk: 'x' })] })}\n`);
  const env = { ...process.env };
  delete env.NODE_OPTIONS;
  await run(
    process.execPath,
    [builtCli, 'replay', 'events.jsonl', '--no-progress', '--local-env', 'local.env'],
    {
      cwd: dir,
      env,
    },
  );
  const stack = await readFile(seen, 'utf8');
  // Line 4 of fail.ts, not the bundle under .tidewater/handlers.
  expect(stack).toMatch(/functions\/fail\.ts:4:\d+/);
  expect(stack).not.toContain('.tidewater');
});
