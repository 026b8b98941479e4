import { beforeAll, describe, expect, it } from 'vitest';
import { backfillExportFile } from '../../../src/backfill/index.js';
import { createTestBucket, localClients } from '../../support/aws.js';
import { quietLogger, StateSink } from '../../support/backfill-table.js';
import { gzLines, manifestLine, putExport } from './export-fixtures.js';

const { s3 } = localClients();

let bucket: string;
beforeAll(async () => {
  bucket = await createTestBucket(s3);
});

describe('backfillExportFile', () => {
  it("sends a batch early at Lambda's 6 MB, whatever batchSize says: memory holds one such batch", async () => {
    // 20 items of 350 KB (under DynamoDB's 400 KB): 7 MB, one batch of 100 by count alone.
    const lines = Array.from({ length: 20 }, (_, i) =>
      JSON.stringify({ Item: { pk: { S: `k${i}` }, pad: { S: 'p'.repeat(350 * 1024) } } }),
    );
    const body = gzLines(lines);
    const { keys } = await putExport(s3, bucket, [body]);
    const batches: number[] = [];
    const sink = new StateSink();
    const report = await backfillExportFile(
      { routes: [{ when: 'insert', to: sink }], metrics: false, logger: quietLogger },
      {
        bucket,
        key: keys[0]!,
        exportType: 'FULL_EXPORT',
        exportTime: Date.parse('2026-01-02T03:04:05.000Z'),
        keyAttributes: ['pk'],
        md5Checksum: manifestLine(keys[0]!, body).md5Checksum as string,
        itemCount: 20,
      },
      { client: s3, batchSize: 100, onProgress: (p) => void batches.push(p.itemsRead) },
    );
    expect(report).toMatchObject({ itemsRead: 20, delivered: 20, complete: true });
    expect(batches.length).toBe(2);
    expect(sink.state.size).toBe(20);
  });
});
