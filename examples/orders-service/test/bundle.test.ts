// The handler as Lambda runs it: bundled with the README's esbuild recipe, loaded in a fresh node
// process (no vitest, no TypeScript), and invoked with a stream event.
import { execFile } from 'node:child_process';
import { mkdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { readArchive } from 'tidewater/archive';
import { useLocalAws } from 'tidewater/local/vitest';
import { streamEvents } from 'tidewater/testing';
import { expect, it } from 'vitest';
import { bundleHandler } from '../build.mjs';

const BUCKET = 'bundle-archive';
const local = useLocalAws({ buckets: [BUCKET] });
const run = promisify(execFile);

it('bundles to an ESM file that imports only the S3 client, loads in a fresh process and archives', async () => {
  // Inside the project, so the bundle resolves @aws-sdk/* from node_modules as Lambda's runtime does.
  const outDir = join(process.cwd(), '.out');
  await mkdir(outDir, { recursive: true });
  const outfile = join(outDir, 'archive.mjs');
  const metafile = await bundleHandler('src/handlers/archive.ts', outfile);

  const external = new Set<string>();
  for (const input of Object.values(metafile.inputs))
    for (const imported of input.imports) if (imported.external) external.add(imported.path);
  expect([...external].filter((path) => path.startsWith('@aws-sdk/'))).toEqual(['@aws-sdk/client-s3']);
  expect(Object.keys(metafile.inputs).some((path) => path.includes('node_modules/pino/'))).toBe(false);
  const bytes = (await stat(outfile)).size;

  const build = streamEvents({ tableName: 'orders' }); // records created 2026-01-01T00:00Z
  const event = build.event(build.ttlDelete({ pk: 'order-9', expiresAt: 1_700_000_000, total: 42 }));
  const script = `
    const started = performance.now();
    const { handler } = await import(${JSON.stringify(outfile)});
    const imported = performance.now();
    const response = await handler(${JSON.stringify(event)}, { getRemainingTimeInMillis: () => 30000, awsRequestId: 'r-1', functionName: 'archive' });
    process.stdout.write(JSON.stringify({ response, importMs: imported - started }));
  `;
  const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script], {
    env: { ...process.env, ...local.current.env, ARCHIVE_BUCKET: BUCKET, AUDIT_PREFIX: 'audit/' },
  });
  const result = JSON.parse(stdout.slice(stdout.lastIndexOf('{"response"'))) as {
    response: { batchItemFailures: unknown[] };
    importMs: number;
  };
  expect(result.response).toEqual({ batchItemFailures: [] });

  const archived = [];
  for await (const record of readArchive({
    bucket: BUCKET,
    table: 'orders',
    prefix: 'archive/',
    from: '2026-01-01T00:00:00Z',
    to: '2026-01-01T01:00:00Z',
    client: local.current.s3,
  }))
    archived.push(record);
  expect(archived.map((r) => r.keys.pk)).toEqual(['order-9']);
  // For BENCHMARKS.md: what a user's bundle weighs and costs to load (printed, never asserted).
  console.log(`bundle: ${bytes} bytes, import in a fresh process: ${result.importMs.toFixed(1)} ms`);
});
