import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { vi } from 'vitest';
import { streamFunctionLines } from './stream-function-yaml.js';

const SRC = resolve('src/index.js');

/**
 * A serverless.yml service whose one stream function (`index`) appends, per record its route takes
 * (`when`), one JSON line of `fields` (an expression of `r`, the record) to `out`: what a command
 * that runs a function's handler (backfill, archive replay) delivered. `handlerSource` replaces the
 * handler module whole.
 */
export async function recordingService(options: { when: string; fields: string; handlerSource?: string }) {
  const dir = await mkdtemp(join(tmpdir(), 'tidewater-cli-service-'));
  const out = join(dir, 'out.jsonl');
  await writeFile(
    join(dir, 'serverless.yml'),
    [
      'service: recorded',
      'provider:',
      '  name: aws',
      '  environment:',
      `    OUT_FILE: ${out}`,
      ...streamFunctionLines('index'),
      '',
    ].join('\n'),
  );
  await writeFile(
    join(dir, 'handler.mjs'),
    options.handlerSource ??
      [
        "import { appendFileSync } from 'node:fs';",
        `import { createStreamHandler } from ${JSON.stringify(SRC)};`,
        'const sink = { name: "out", write(records) {',
        `  appendFileSync(process.env.OUT_FILE, records.map((r) => JSON.stringify(${options.fields}) + "\\n").join(""));`,
        '} };',
        `export const handler = createStreamHandler({ routes: [{ when: ${JSON.stringify(options.when)}, to: sink }], metrics: false });`,
      ].join('\n'),
  );
  return { config: join(dir, 'serverless.yml'), out, dir };
}

/** Points the commands' clients at the run's DynamoDB Local and S3 server, for the test file. */
export function stubLocalEndpoints(dynamoEndpoint: string, s3Endpoint: string): void {
  for (const [name, value] of Object.entries({
    AWS_ENDPOINT_URL_DYNAMODB: dynamoEndpoint,
    AWS_ENDPOINT_URL_S3: s3Endpoint,
    AWS_S3_FORCE_PATH_STYLE: 'true',
    AWS_REQUEST_CHECKSUM_CALCULATION: 'WHEN_REQUIRED',
    AWS_RESPONSE_CHECKSUM_VALIDATION: 'WHEN_REQUIRED',
  }))
    vi.stubEnv(name, value);
}
