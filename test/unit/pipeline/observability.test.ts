import { describe, expect, it } from 'vitest';
import { processBatch } from '../../../src/pipeline/index.js';
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
        ttlAttribute: 'expiresAt',
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
});
