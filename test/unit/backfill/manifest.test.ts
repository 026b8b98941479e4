import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { BackfillError, InvalidExportManifestError } from '../../../src/backfill/errors.js';
import {
  type ExportSummary,
  parseExportSummary,
  parseManifestFiles,
} from '../../../src/backfill/manifest.js';

const runs = { numRuns: 400, interruptAfterTimeLimit: 20_000 };
const FOLDER = 'exports/AWSDynamoDB/01767323045000-a1b2c3d4';
const SUMMARY_KEY = `${FOLDER}/manifest-summary.json`;
const MD5 = 'sQMSpEILNgoQmarvDFonGQ==';

const summary = (itemCount: number): ExportSummary => ({
  key: SUMMARY_KEY,
  exportArn: 'arn:aws:dynamodb:us-east-1:000000000000:table/t/export/x',
  exportTime: 0,
  tableArn: undefined,
  itemCount,
  exportType: 'FULL_EXPORT',
  view: 'NEW_AND_OLD_IMAGES',
  manifestFilesKey: `${FOLDER}/manifest-files.json`,
});

/** Names an attacker would try as keys or field names. */
const hostileName = fc.constantFrom(
  '__proto__',
  'constructor',
  'prototype',
  'toString',
  'hasOwnProperty',
  '',
);
const hostileKey = fc.oneof(
  hostileName,
  fc.string(),
  fc.constantFrom(
    `${FOLDER}/data/../../../x.json.gz`,
    `${FOLDER}/data//x.json.gz`,
    `${FOLDER}/data/./x.json.gz`,
    `s3://other-bucket/${FOLDER}/data/x.json.gz`,
    `other/AWSDynamoDB/1/data/x.json.gz`,
    `${FOLDER}/data/x\u0000.json.gz`,
    `${FOLDER}/data/${'a'.repeat(1100)}`,
  ),
  fc.string().map((s) => `${FOLDER}/data/${s}`),
);
const anyValue = fc.oneof(
  fc.jsonValue(),
  hostileName,
  fc.constantFrom(Number.MAX_SAFE_INTEGER + 2, -1, 1.5, 1e308, 'oops', false, null, [], {}),
);
const manifestLine = fc.oneof(
  fc.record(
    {
      itemCount: anyValue,
      md5Checksum: fc.oneof(anyValue, fc.constant(MD5)),
      dataFileS3Key: fc.oneof(hostileKey, anyValue),
    },
    { requiredKeys: [] },
  ),
  fc.dictionary(fc.oneof(hostileName, fc.string()), anyValue),
);
const listing = fc.oneof(
  fc
    .array(
      manifestLine.map((l) => JSON.stringify(l)),
      { maxLength: 20 },
    )
    .map((ls) => ls.join('\n')),
  fc.string(),
  fc
    .array(fc.oneof(fc.string(), fc.constant('{"__proto__":{"polluted":1}}')), { maxLength: 20 })
    .map((ls) => ls.join('\n')),
);

function prototypeClean(): void {
  expect(Object.getOwnPropertyNames(Object.prototype).sort()).toEqual(PROTOTYPE_NAMES);
  expect(({} as Record<string, unknown>).polluted).toBeUndefined();
}
const PROTOTYPE_NAMES = Object.getOwnPropertyNames(Object.prototype).sort();

describe('parseManifestFiles over hostile manifests', () => {
  it('gives a typed error or files that are all inside the export and add up, never touching Object.prototype', () => {
    fc.assert(
      fc.property(listing, fc.nat({ max: 50 }), (text, total) => {
        let files: ReturnType<typeof parseManifestFiles>;
        try {
          files = parseManifestFiles(text, summary(total));
        } catch (error) {
          expect(error).toBeInstanceOf(BackfillError);
          prototypeClean();
          return;
        }
        for (const f of files) {
          expect(f.dataFileS3Key.startsWith(`${FOLDER}/data/`)).toBe(true);
          expect(f.dataFileS3Key.split('/')).not.toContain('..');
          expect(Number.isSafeInteger(f.itemCount) && f.itemCount >= 0).toBe(true);
        }
        expect(files.reduce((n, f) => n + f.itemCount, 0)).toBe(total);
        prototypeClean();
      }),
      runs,
    );
  });

  it('reads back a well-formed manifest of any size, one file a line, in order', () => {
    fc.assert(
      fc.property(fc.array(fc.nat({ max: 1000 }), { maxLength: 200 }), (counts) => {
        const lines = counts.map((itemCount, i) =>
          JSON.stringify({
            itemCount,
            md5Checksum: MD5,
            etag: 'e-1',
            dataFileS3Key: `${FOLDER}/data/f${i}.json.gz`,
          }),
        );
        const total = counts.reduce((a, b) => a + b, 0);
        const files = parseManifestFiles(`${lines.join('\n')}\n`, summary(total));
        expect(files.map((f) => f.itemCount)).toEqual(counts);
        expect(files.map((f) => f.dataFileS3Key)).toEqual(
          counts.map((_, i) => `${FOLDER}/data/f${i}.json.gz`),
        );
      }),
      runs,
    );
  });

  it('a flood of empty lines is read in linear time, and is no files', () => {
    expect(parseManifestFiles('\n'.repeat(1_000_000), summary(0))).toEqual([]);
    expect(() => parseManifestFiles('\n'.repeat(1_000_000), summary(1))).toThrow(InvalidExportManifestError);
  });
});

describe('parseExportSummary over hostile summaries', () => {
  const field = fc.oneof(
    anyValue,
    fc.constantFrom('FULL_EXPORT', 'INCREMENTAL_EXPORT', 'DYNAMODB_JSON', 'ION'),
  );
  const summaryText = fc.oneof(
    fc
      .record(
        {
          exportArn: field,
          exportTime: fc.oneof(field, fc.constant('2026-01-02T03:04:05.000Z')),
          itemCount: field,
          manifestFilesS3Key: fc.oneof(hostileKey, fc.constant(`${FOLDER}/manifest-files.json`)),
          outputFormat: field,
          exportType: field,
          outputView: field,
          tableArn: field,
          ['__proto__']: field,
        },
        { requiredKeys: [] },
      )
      .map((o) => JSON.stringify(o)),
    fc.string(),
    fc.jsonValue().map((v) => JSON.stringify(v)),
  );

  it('gives a typed error or a summary whose fields have their types, never touching Object.prototype', () => {
    fc.assert(
      fc.property(summaryText, (text) => {
        try {
          const s = parseExportSummary(text, SUMMARY_KEY);
          expect(typeof s.exportArn).toBe('string');
          expect(Number.isFinite(s.exportTime)).toBe(true);
          expect(Number.isSafeInteger(s.itemCount)).toBe(true);
          expect(s.manifestFilesKey.startsWith(`${FOLDER}/`)).toBe(true);
          expect(['FULL_EXPORT', 'INCREMENTAL_EXPORT']).toContain(s.exportType);
          expect(s.tableArn === undefined || typeof s.tableArn === 'string').toBe(true);
        } catch (error) {
          expect(error).toBeInstanceOf(BackfillError);
        }
        prototypeClean();
      }),
      runs,
    );
  });
});
