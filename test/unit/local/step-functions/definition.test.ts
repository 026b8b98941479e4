// biome-ignore-all lint/suspicious/noExplicitAny: definitions and result files are untyped JSON
import { readFileSync } from 'node:fs';
import validate from 'asl-validator';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { planDistributedMap, substitute } from '../../../../src/local/step-functions/definition.js';
import { exceedsTolerance } from '../../../../src/local/step-functions/distributed-map.js';
import { UnsupportedDefinitionError } from '../../../../src/local/step-functions/errors.js';

// infra/backfill-map.asl.json: the one definition deployed (through infra/backfill-map.cjs) and run
// by the local Map runner.
const file = new URL('../../../../infra/backfill-map.asl.json', import.meta.url);
const substitutions = {
  BackfillFunctionArn: 'arn:aws:lambda:us-east-1:123456789012:function:tidewater-dev-backfillExportFile',
  ExportBucket: 'exports-bucket',
  ResultsBucket: 'results-bucket',
  ResultsPrefix: 'backfill-results/',
};
const definition = () => substitute(JSON.parse(readFileSync(file, 'utf8')), substitutions) as any;

describe('the backfill state machine definition', () => {
  it('is valid Amazon States Language (asl-validator), Distributed Map fields included', () => {
    const result = validate(definition());
    expect(result.errors).toEqual([]);
    expect(result.isValid).toBe(true);
    // The validator knows the Distributed Map's fields: an unknown one in the Map is refused.
    const broken = definition();
    broken.States.BackfillDataFiles.ItemReaderr = {};
    expect(validate(broken).isValid).toBe(false);
  });

  it('is a Distributed Map over manifest-files.json (JSONL), one STANDARD child per data file, results to S3', () => {
    const plan = planDistributedMap(definition());
    expect(plan).toMatchObject({
      state: 'BackfillDataFiles',
      reader: { inputType: 'JSONL', bucket: 'exports-bucket', key: { 'v.$': '$.manifestFilesKey' } },
      batcher: undefined,
      maxConcurrency: 40,
      toleratedPercentage: 0,
      executionType: 'STANDARD',
      task: { state: 'BackfillDataFile', resource: substitutions.BackfillFunctionArn },
      writer: { bucket: 'results-bucket', prefix: 'backfill-results/' },
    });
    expect(plan.itemSelector).toEqual({
      bucket: 'exports-bucket',
      'key.$': '$$.Map.Item.Value.dataFileS3Key',
      'fileIndex.$': '$$.Map.Item.Index',
      'md5Checksum.$': '$$.Map.Item.Value.md5Checksum',
      'itemCount.$': '$$.Map.Item.Value.itemCount',
      'exportType.$': '$.exportType',
      'exportTime.$': '$.exportTime',
    });
  });

  it('names the state and field of anything the local runner does not emulate', () => {
    const cases: [(d: any) => void, string, string][] = [
      [(d) => (d.States.BackfillDataFiles.Catch = []), 'BackfillDataFiles', 'Catch'],
      [
        (d) => (d.States.BackfillDataFiles.ItemReader.ReaderConfig.InputType = 'MANIFEST'),
        'BackfillDataFiles',
        'ItemReader.ReaderConfig.InputType',
      ],
      [
        (d) => (d.States.BackfillDataFiles.ResultWriter.WriterConfig = {}),
        'BackfillDataFiles',
        'ResultWriter.WriterConfig',
      ],
      [
        (d) => (d.States.BackfillDataFiles.ItemSelector['x.$'] = 'States.Format($.a)'),
        'BackfillDataFiles',
        'ItemSelector.x.$',
      ],
      [
        (d) => (d.States.BackfillDataFiles.ItemProcessor.States.BackfillDataFile.Catch = []),
        'BackfillDataFile',
        'Catch',
      ],
      [
        (d) =>
          (d.States.BackfillDataFiles.ItemProcessor.States.BackfillDataFile.Retry[0].ErrorEquals = [
            'States.ALL',
          ]),
        'BackfillDataFile',
        'Retry[0].ErrorEquals',
      ],
      [
        (d) => (d.States.BackfillDataFiles.ItemProcessor.ProcessorConfig.Mode = 'INLINE'),
        'BackfillDataFiles',
        'ItemProcessor.ProcessorConfig.Mode',
      ],
    ];
    for (const [change, state, field] of cases) {
      const d = definition();
      change(d);
      const error = (() => {
        try {
          planDistributedMap(d);
        } catch (e) {
          return e;
        }
      })();
      expect(error, field).toBeInstanceOf(UnsupportedDefinitionError);
      expect(error, field).toMatchObject({ name: 'UnsupportedDefinitionError', state, field });
    }
    // biome-ignore lint/suspicious/noTemplateCurlyInString: a DefinitionSubstitutions placeholder
    expect(() => substitute({ a: '${Missing}' }, {})).toThrow(UnsupportedDefinitionError);
  });
});

describe('exceedsTolerance', () => {
  it('fails on any failure with no tolerance set, and only past the percentage or count set', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 10_000 }),
        fc.nat(),
        fc.integer({ min: 0, max: 100 }),
        fc.nat(50),
        (total, f, pct, count) => {
          const failed = f % (total + 1);
          expect(
            exceedsTolerance({ toleratedPercentage: undefined, toleratedCount: undefined }, failed, total),
          ).toBe(failed > 0);
          expect(
            exceedsTolerance({ toleratedPercentage: pct, toleratedCount: undefined }, failed, total),
          ).toBe(failed / total > pct / 100);
          expect(
            exceedsTolerance({ toleratedPercentage: undefined, toleratedCount: count }, failed, total),
          ).toBe(failed > count);
          expect(exceedsTolerance({ toleratedPercentage: pct, toleratedCount: count }, failed, total)).toBe(
            failed / total > pct / 100 || failed > count,
          );
        },
      ),
    );
  });
});
