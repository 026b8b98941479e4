import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { BatchWriteItemCommand } from '@aws-sdk/client-dynamodb';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { EXIT } from '../../../src/cli/exit-codes.js';
import { main } from '../../../src/cli/program.js';
import { writeLocalExport } from '../../../src/local/export/index.js';
import { createTestBucket, createTestTable, localClients } from '../../support/aws.js';
import { captureOutput } from '../../support/capture-output.js';
import { recordingService, stubLocalEndpoints } from '../../support/recording-service.js';

const { dynamodb, s3, dynamoEndpoint, s3Endpoint } = localClients();
/** A service whose one stream function appends each record's keys and origin to `out`. */
const service = (handlerSource?: string) =>
  recordingService({
    when: 'insert',
    fields: '{ keys: r.raw.dynamodb.Keys, origin: r.origin }',
    ...(handlerSource === undefined ? {} : { handlerSource }),
  });

let table: Awaited<ReturnType<typeof createTestTable>>;
let bucket: string;
beforeAll(async () => {
  table = await createTestTable(dynamodb);
  bucket = await createTestBucket(s3);
  const puts = Array.from({ length: 20 }, (_, i) => ({ PutRequest: { Item: { pk: { S: `k${i}` } } } }));
  await dynamodb.send(new BatchWriteItemCommand({ RequestItems: { [table.tableName]: puts } }));
  stubLocalEndpoints(dynamoEndpoint, s3Endpoint);
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

  it("--scan's progress bar on a terminal shows the time it has run and its rate", async () => {
    const svc = await service();
    const tty = Object.getOwnPropertyDescriptor(process.stderr, 'isTTY');
    Object.defineProperty(process.stderr, 'isTTY', { value: true, configurable: true });
    try {
      const { err } = captureOutput();
      expect(await main(['backfill', '--scan', table.tableName, '--segments', '2', '-c', svc.config])).toBe(
        EXIT.ok,
      );
      expect(err.join('')).toMatch(/20\/20 items \| 2\/2 segments \| \d+ s \| (\d+|-) items\/s/);
    } finally {
      if (tty) Object.defineProperty(process.stderr, 'isTTY', tty);
      else delete (process.stderr as { isTTY?: boolean }).isTTY;
    }
  });

  it('--scan of a misspelled table names it and the nearest table, before the handler loads', async () => {
    const svc = await service();
    const typo = `${table.tableName}x`;
    const { err } = captureOutput();
    expect(await main(['backfill', '--scan', typo, '-c', svc.config, '--no-progress'])).toBe(EXIT.error);
    expect(err.join('')).toContain(
      `NameNotFoundError: --scan ${typo}: no such table. Did you mean '${table.tableName}'?`,
    );
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
