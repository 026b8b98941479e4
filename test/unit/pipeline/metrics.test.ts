import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { processBatch, ttlHealth } from '../../../src/pipeline/index.js';
import { batch, captureLogger, quiet, RecordingDeadLetter, RecordingSink, seq } from './fixtures.js';

function emfCapture() {
  const lines: string[] = [];
  return { lines, writer: { write: (line: string) => lines.push(line) } };
}

describe('observability', () => {
  it('writes one EMF line per invocation with per-kind, per-sink, failure and age metrics', async () => {
    const emf = emfCapture();
    const now = 1_800_000_010_000;
    const archive = new RecordingSink('archive', (s) => s === seq(4));
    await processBatch(
      batch(6, (i) => ({
        kind: (['insert', 'modify', 'ttl-delete', 'user-delete', 'ttl-delete', 'insert'] as const)[i],
      })),
      {
        ...quiet,
        clock: () => now,
        retry: { attempts: 1, baseDelayMs: 0, maxDelayMs: 0 },
        deadLetter: new RecordingDeadLetter(),
        metrics: { namespace: 'Orders', dimensions: { Function: 'archiver' }, writer: emf.writer },
        routes: [{ when: 'ttl-delete', to: archive }],
      },
    );
    expect(emf.lines).toHaveLength(1);
    const doc = JSON.parse(emf.lines[0]!);
    expect(doc._aws.CloudWatchMetrics[0]).toMatchObject({ Namespace: 'Orders', Dimensions: [['Function']] });
    const names = doc._aws.CloudWatchMetrics[0].Metrics.map((m: { Name: string }) => m.Name);
    for (const name of Object.keys(doc).filter((k) => k !== '_aws' && k !== 'Function'))
      expect(names).toContain(name);
    expect(doc).toMatchObject({
      Function: 'archiver',
      Records: 6,
      Inserts: 2,
      Modifies: 1,
      TtlDeletes: 2,
      UserDeletes: 1,
      Unrouted: 4,
      'Routed.archive': 2,
      DeadLettered: 1,
      Failed: 0,
      IteratorAgeMs: 10_000,
      DurationMs: 0,
    });
  });

  it('warns (without the image) and counts when an item TTL will never expire', async () => {
    const emf = emfCapture();
    const { logger, lines } = captureLogger();
    const ttlFor = (i: number) =>
      i === 0 ? { N: '1800000600' } : i === 1 ? { N: '1800000600000' } : { S: '1800000600' };
    await processBatch(
      batch(3, (i) => ({ ttl: ttlFor(i) })),
      {
        ...quiet,
        logger,
        clock: () => 1_800_000_000_000,
        ttlAttribute: ttlHealth('expiresAt'),
        metrics: { writer: emf.writer },
        routes: [{ when: 'insert', to: new RecordingSink('s') }],
      },
      { awsRequestId: 'req-9' },
    );
    expect(JSON.parse(emf.lines[0]!).TtlNeverExpires).toBe(2);
    const warnings = lines.filter((l) => l.ttlProblem !== undefined);
    expect(warnings.map((w) => [w.sequenceNumber, w.ttlProblem])).toEqual([
      [seq(1), 'milliseconds'],
      [seq(2), 'not-a-number'],
    ]);
    for (const w of warnings) {
      expect(w).not.toHaveProperty('NewImage');
      expect(w).toMatchObject({
        level: 40,
        requestId: 'req-9',
        firstSequenceNumber: seq(0),
        lastSequenceNumber: seq(2),
      });
    }
  });

  it('logs the partial failure with the invocation bindings', async () => {
    const { logger, lines } = captureLogger();
    await processBatch(
      batch(2),
      { ...quiet, logger, routes: [{ when: 'insert', to: new RecordingSink('s', (s) => s === seq(1)) }] },
      { awsRequestId: 'req-2' },
    );
    const summary = lines.find((l) => l.itemIdentifier !== undefined);
    expect(summary).toMatchObject({ requestId: 'req-2', itemIdentifier: seq(1), notDone: 1, records: 2 });
  });

  it('writes the EMF line an object with these keys stringifies to, whatever the dimension and sink names', async () => {
    // Names that collide with the line's own keys, index-like ones, and ordinary ones.
    const name = fc.constantFrom('Function', 'Records', '_aws', '42', 'Routed.a', 'a', 'Stage', 'DurationMs');
    await fc.assert(
      fc.asyncProperty(
        fc.dictionary(name, fc.string({ maxLength: 3 }), { maxKeys: 4 }),
        fc.array(fc.constantFrom('a', 'b', '7', 'Records'), { minLength: 1, maxLength: 3 }),
        async (dimensions, sinkNames) => {
          const emf = emfCapture();
          const now = 1_800_000_010_000;
          await processBatch(batch(3), {
            ...quiet,
            clock: () => now,
            metrics: { namespace: 'Orders', dimensions, writer: emf.writer },
            routes: sinkNames.map((sinkName) => ({
              when: 'insert' as const,
              to: new RecordingSink(sinkName),
            })),
          });
          const counts: Record<string, number> = {
            Records: 3,
            Inserts: 3,
            Modifies: 0,
            UserDeletes: 0,
            TtlDeletes: 0,
            Malformed: 0,
            Unrouted: 0,
            Failed: 0,
            DeadLettered: 0,
            TtlNeverExpires: 0,
            Retries: 0,
            Duplicates: 0,
          };
          const metrics = [
            ...Object.keys(counts).map((n) => ({ Name: n, Unit: 'Count' })),
            ...sinkNames.map((n) => ({ Name: `Routed.${n}`, Unit: 'Count' })),
            { Name: 'IteratorAgeMs', Unit: 'Milliseconds' },
            { Name: 'DurationMs', Unit: 'Milliseconds' },
          ];
          const values: Record<string, number> = { ...counts };
          for (const n of sinkNames) values[`Routed.${n}`] = 3;
          values.IteratorAgeMs = 10_000;
          values.DurationMs = 0;
          const document = {
            _aws: {
              Timestamp: now,
              CloudWatchMetrics: [
                { Namespace: 'Orders', Dimensions: [Object.keys(dimensions)], Metrics: metrics },
              ],
            },
            ...dimensions,
            ...values,
          };
          expect(emf.lines).toEqual([`${JSON.stringify(document)}\n`]);
        },
      ),
      { numRuns: 200 },
    );
  });
});
