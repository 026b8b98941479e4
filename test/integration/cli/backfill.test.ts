import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { BatchWriteItemCommand } from '@aws-sdk/client-dynamodb';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { EXIT } from '../../../src/cli/exit-codes.js';
import { main } from '../../../src/cli/program.js';
import { writeLocalExport } from '../../../src/local/export/index.js';
import { createTestBucket, createTestTable, localClients } from '../../support/aws.js';
import { captureOutput } from '../../support/capture-output.js';
import { PACKAGE_ROOT_SOURCE, writeStreamService } from '../../support/cli-test.js';

const { dynamodb, s3, dynamoEndpoint, s3Endpoint } = localClients();

/** A service whose one stream function appends each record's keys and origin to `out`. */
function service(handlerSource?: string) {
  return writeStreamService({
    name: 'index',
    handler: () =>
      handlerSource ??
      [
        "import { appendFileSync } from 'node:fs';",
        `import { createStreamHandler } from ${JSON.stringify(PACKAGE_ROOT_SOURCE)};`,
        'const sink = { name: "out", write(records) {',
        // biome-ignore lint/suspicious/noTemplateCurlyInString: the template literal is the generated module's code
        '  appendFileSync(process.env.OUT_FILE, records.map((r) => `${JSON.stringify({ keys: r.raw.dynamodb.Keys, origin: r.origin })}\\n`).join(""));',
        '} };',
        "export const handler = createStreamHandler({ routes: [{ when: 'insert', to: sink }], metrics: false });",
      ].join('\n'),
  });
}

let table: Awaited<ReturnType<typeof createTestTable>>;
let bucket: string;
beforeAll(async () => {
  table = await createTestTable(dynamodb);
  bucket = await createTestBucket(s3);
  const puts = Array.from({ length: 20 }, (_, i) => ({ PutRequest: { Item: { pk: { S: `k${i}` } } } }));
  await dynamodb.send(new BatchWriteItemCommand({ RequestItems: { [table.tableName]: puts } }));
  for (const [name, value] of Object.entries({
    AWS_ENDPOINT_URL_DYNAMODB: dynamoEndpoint,
    AWS_ENDPOINT_URL_S3: s3Endpoint,
    AWS_S3_FORCE_PATH_STYLE: 'true',
    AWS_REQUEST_CHECKSUM_CALCULATION: 'WHEN_REQUIRED',
    AWS_RESPONSE_CHECKSUM_VALIDATION: 'WHEN_REQUIRED',
  }))
    vi.stubEnv(name, value);
});
afterEach(() => vi.restoreAllMocks());

async function lines(file: string): Promise<{ keys: unknown; origin: { from: string } }[]> {
  return (await readFile(file, 'utf8'))
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l));
}

describe('tidewater backfill', () => {
  it('--from-export runs the function over every item of the export, with a checkpoint', async () => {
    const exported = await writeLocalExport({ dynamodb, s3, bucket, table: table.tableName, type: 'full' });
    const svc = await service();
    const { out } = captureOutput();
    const code = await main([
      'backfill',
      '--from-export',
      `s3://${bucket}/${exported.prefix}`,
      '-c',
      svc.config,
      '--checkpoint',
      join(svc.dir, 'cp.json'),
      '--batch-size',
      '7',
      '--no-progress',
    ]);
    vi.restoreAllMocks();
    expect(out.join('')).toMatch(/20 items read, 20 delivered, 0 dead-lettered, 0 failed; 3\/3 files done/);
    expect(code).toBe(EXIT.ok);
    const written = await lines(svc.out);
    expect(new Set(written.map((l) => JSON.stringify(l.keys))).size).toBe(20);
    expect(written.every((l) => l.origin.from === 'export')).toBe(true);
  });

  it('a manifest listing no files while claiming items exits non-zero, nothing run', async () => {
    const { putExport } = await import('../backfill/export-fixtures.js');
    const { prefix } = await putExport(s3, bucket, [], { itemCount: 20 });
    const svc = await service();
    const { err } = captureOutput();
    const code = await main([
      'backfill',
      '--from-export',
      `s3://${bucket}/${prefix}`,
      '-c',
      svc.config,
      '--no-progress',
    ]);
    vi.restoreAllMocks();
    expect(code).toBe(EXIT.error);
    expect(err.join('')).toMatch(
      /InvalidExportManifestError: .*manifest-files\.json: lists no data files, but .* 20 items/,
    );
    await expect(readFile(svc.out, 'utf8')).rejects.toThrow(/ENOENT/);
  });

  it('--scan reads the table in segments; --dry-run runs nothing', async () => {
    const svc = await service();
    const { out } = captureOutput();
    expect(
      await main(['backfill', '--scan', table.tableName, '--segments', '2', '-c', svc.config, '--dry-run']),
    ).toBe(EXIT.ok);
    expect(out.join('')).toMatch(/dry run: scan .* in 2 segments/);
    expect(
      await main([
        'backfill',
        '--scan',
        table.tableName,
        '--segments',
        '2',
        '-c',
        svc.config,
        '--no-progress',
      ]),
    ).toBe(EXIT.ok);
    vi.restoreAllMocks();
    const written = await lines(svc.out);
    expect(written).toHaveLength(20);
    expect(written.every((l) => l.origin.from === 'scan')).toBe(true);
  });

  it('a handler not made by createStreamHandler is refused by name; both sources at once is a usage error', async () => {
    const svc = await service('export async function handler() { return { batchItemFailures: [] }; }');
    const { err } = captureOutput();
    const code = await main(['backfill', '--scan', table.tableName, '-c', svc.config]);
    expect(code).toBe(EXIT.error);
    expect(err.join('')).toMatch(
      /NotAStreamHandlerError: handler\.handler is not a handler made by createStreamHandler/,
    );
    expect(
      await main([
        'backfill',
        '--scan',
        table.tableName,
        '--from-export',
        `s3://${bucket}/x`,
        '-c',
        svc.config,
      ]),
    ).toBe(EXIT.usage);
  });
});
