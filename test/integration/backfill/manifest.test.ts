import { beforeAll, describe, expect, it } from 'vitest';
import { InvalidExportManifestError, runBackfill } from '../../../src/backfill/index.js';
import { MemoryDeadLetterSink } from '../../../src/sinks/memory-dead-letter-sink.js';
import { createTestBucket, localClients } from '../../support/aws.js';
import { quietLogger, StateSink } from '../../support/backfill-table.js';
import { gzLines, putExport } from './export-fixtures.js';

const { s3 } = localClients();
const item = (pk: string) => JSON.stringify({ Item: { pk: { S: pk } } });

let bucket: string;
beforeAll(async () => {
  bucket = await createTestBucket(s3);
});

async function run(prefix: string, sink: StateSink) {
  return runBackfill(
    {
      routes: [{ when: 'insert', to: sink }],
      deadLetter: new MemoryDeadLetterSink(),
      metrics: false,
      logger: quietLogger,
    },
    { source: { export: { bucket, prefix } }, s3, keyAttributes: ['pk'] },
  );
}

/** The manifest-files.json key of an export written by putExport. */
const manifestOf = (prefix: string) => `${prefix}/manifest-files.json`;

describe('a manifest is checked before any data file is read', () => {
  const outside: [string, (prefix: string, key: string) => string][] = [
    ['a `../` out of the export', (prefix) => `${prefix}/data/../../../other/AWSDynamoDB/x/data/f.json.gz`],
    ['another prefix', () => 'other/AWSDynamoDB/1-2/data/file0.json.gz'],
    ['another bucket', (_, key) => `s3://other-bucket/${key}`],
    ['`__proto__`', () => '__proto__'],
    ['the export folder but not its data/', (prefix) => `${prefix}/manifest-summary.json`],
  ];
  for (const [what, keyOf] of outside) {
    it(`a dataFileS3Key naming ${what} is an InvalidExportManifestError naming the manifest line; nothing is delivered`, async () => {
      const { prefix } = await putExport(
        s3,
        bucket,
        [gzLines([item('a')]), gzLines([item('b')])],
        {},
        (l, i) => {
          const key = String(l.dataFileS3Key);
          return i === 1 ? { ...l, dataFileS3Key: keyOf(key.slice(0, key.indexOf('/data/')), key) } : l;
        },
      );
      const sink = new StateSink();
      const error = await run(prefix, sink).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(InvalidExportManifestError);
      expect((error as Error).message).toMatch(
        new RegExp(`^${manifestOf(prefix)} line 2: dataFileS3Key (is not under|has an empty)`),
      );
      expect(sink.state.size).toBe(0);
      expect(Object.prototype).not.toHaveProperty('line');
      expect(Object.prototype).not.toHaveProperty('done');
    });
  }

  it('a data file listed twice is refused (it would be delivered twice)', async () => {
    const { prefix } = await putExport(s3, bucket, [gzLines([item('a')]), gzLines([item('b')])], {}, (l) => ({
      ...l,
      dataFileS3Key: String(l.dataFileS3Key).replace(/file\d/, 'file0'),
    }));
    await expect(run(prefix, new StateSink())).rejects.toThrow(
      `${manifestOf(prefix)} line 2: dataFileS3Key is listed twice`,
    );
  });

  it("the summary's itemCount that is not the files' sum is refused, naming manifest-summary.json", async () => {
    const { prefix } = await putExport(s3, bucket, [gzLines([item('a'), item('b')])], { itemCount: 3 });
    const sink = new StateSink();
    await expect(run(prefix, sink)).rejects.toThrow(
      `${prefix}/manifest-summary.json: itemCount 3 is not the sum of the data files' item counts (2)`,
    );
    expect(sink.state.size).toBe(0);
  });

  it('a manifest listing no files while the summary claims items is refused', async () => {
    const { prefix } = await putExport(s3, bucket, [], { itemCount: 5 });
    await expect(run(prefix, new StateSink())).rejects.toThrow(
      /manifest-files\.json: lists no data files, but .* says the export holds 5 items/,
    );
  });

  it('an itemCount or md5Checksum of the wrong type is refused, naming the line', async () => {
    for (const bad of [
      { itemCount: '1' },
      { itemCount: -1 },
      { md5Checksum: false },
      { md5Checksum: 'abc' },
    ]) {
      const { prefix } = await putExport(s3, bucket, [gzLines([item('a')])], { itemCount: 1 }, (l) => ({
        ...l,
        ...bad,
      }));
      await expect(run(prefix, new StateSink())).rejects.toThrow(`${manifestOf(prefix)} line 1:`);
    }
  });

  it('a manifestFilesS3Key outside the export folder is refused', async () => {
    const { prefix } = await putExport(s3, bucket, [gzLines([item('a')])], {
      manifestFilesS3Key: 'elsewhere/manifest-files.json',
    });
    await expect(run(prefix, new StateSink())).rejects.toThrow(
      /manifestFilesS3Key is not under the export's folder/,
    );
  });
});
