import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { eraseAction, splitRows } from '../../../src/archive/erase-plan.js';
import type { ArchiveRow } from '../../../src/archive/format.js';
import {
  closesAt,
  DEFAULT_CLOSED_AFTER_SECONDS,
  parseHour,
  scheduledWindow,
  wholeHours,
} from '../../../src/archive/hours.js';
import { type CompactionManifest, manifestKey, parseManifest } from '../../../src/archive/manifest.js';
import { ArchiveFormatError } from '../../../src/sinks/index.js';

const HOUR = 3_600_000;
const at = (iso: string) => Date.parse(iso);

describe('hours', () => {
  it('closes an hour 25 hours after its end by default: past the 24-hour record age limit', () => {
    expect(DEFAULT_CLOSED_AFTER_SECONDS).toBe(90_000);
    expect(new Date(closesAt(at('2026-01-15T03:00Z'), DEFAULT_CLOSED_AFTER_SECONDS)).toISOString()).toBe(
      '2026-01-16T05:00:00.000Z',
    );
  });

  it('covers whole hours, and a scheduled run the lookback hours that are closed', () => {
    expect(wholeHours(at('2026-01-15T03:20Z'), at('2026-01-15T05:00Z'))).toEqual({
      fromMs: at('2026-01-15T03:00Z'),
      toMs: at('2026-01-15T05:00Z'),
    });
    fc.assert(
      fc.property(
        fc.integer({ min: 1.6e12, max: 2e12 }),
        fc.nat(200_000),
        fc.integer({ min: 1, max: 96 }),
        (now, after, lookback) => {
          const w = scheduledWindow(now, after, lookback);
          expect(w.toMs - w.fromMs).toBe(lookback * HOUR);
          expect(w.toMs % HOUR).toBe(0);
          // The last hour of the window is closed; the hour after it is not yet.
          expect(closesAt(w.toMs - HOUR, after)).toBeLessThanOrEqual(now);
          expect(closesAt(w.toMs, after)).toBeGreaterThan(now);
        },
      ),
    );
  });

  it('reads an hour as YYYY-MM-DDTHH or any time inside it', () => {
    expect(parseHour('2026-01-15T03')).toEqual({
      fromMs: at('2026-01-15T03:00Z'),
      toMs: at('2026-01-15T04:00Z'),
    });
    expect(parseHour('2026-01-15T03:59:59Z')?.fromMs).toBe(at('2026-01-15T03:00Z'));
    expect(parseHour('yesterday')).toBeUndefined();
  });
});

describe('erase planning', () => {
  const target = {
    segment: 'acme',
    fromMs: at('2026-01-15T00:00Z'),
    toMs: at('2026-01-15T12:30Z'),
    canPartition: true,
  };

  it("deletes the tenant's objects of whole hours unread, reads cut hours and mixed objects, keeps others", () => {
    expect(eraseAction({ tenant: 'acme' }, at('2026-01-15T03:00Z'), target)).toBe('delete');
    expect(eraseAction({ tenant: 'acme' }, at('2026-01-15T12:00Z'), target)).toBe('read');
    expect(eraseAction({ tenant: 'globex' }, at('2026-01-15T03:00Z'), target)).toBe('keep');
    expect(eraseAction({}, at('2026-01-15T03:00Z'), target)).toBe('read');
    expect(eraseAction({}, at('2026-01-15T03:00Z'), { ...target, canPartition: false })).toBe(
      'unpartitioned',
    );
  });

  it("splits rows: the tenant's in range go, the rest stay in order, unplaceable rows stay and are counted", () => {
    const row = (n: number, tenant: string, iso: string) =>
      ({
        sequenceNumber: String(n),
        eventID: `e${n}`,
        approximateCreationDateTime: at(iso) / 1000,
        keys: { pk: { S: `${tenant}#${n}` } },
      }) as unknown as ArchiveRow;
    const rows = [
      row(1, 'acme', '2026-01-15T12:10Z'),
      row(2, 'globex', '2026-01-15T12:11Z'),
      row(3, 'acme', '2026-01-15T12:40Z'), // after `to`
      row(4, '?', '2026-01-15T12:12Z'),
      row(5, 'acme', '2026-01-15T12:13Z'),
    ];
    const split = splitRows(
      rows,
      (r) => {
        const tenant = String(r.keys.pk?.S).split('#')[0];
        return tenant === '?' ? undefined : tenant === 'acme';
      },
      target.fromMs,
      target.toMs,
    );
    expect(split.erased.map((r) => r.sequenceNumber)).toEqual(['1', '5']);
    expect(split.kept.map((r) => r.sequenceNumber)).toEqual(['2', '3', '4']);
    expect(split.unattributed).toBe(1);
  });
});

describe('compaction manifests', () => {
  const manifest: CompactionManifest = {
    type: 'tidewater.compaction',
    version: 1,
    prefix: 'archive',
    table: 'orders',
    dt: '2026-01-15',
    hour: '03',
    createdAt: '2026-01-16T06:00:01.234Z',
    inputs: [],
    outputs: [],
    replaced: [],
    rows: { read: 0, duplicates: 0, written: 0, unassigned: 0 },
    rowSetSha256: 'ab'.repeat(32),
  };

  it('live beside the tables, named by time so they list oldest first', () => {
    expect(manifestKey(manifest)).toBe(
      'archive/_compaction/table=orders/dt=2026-01-15/hour=03/20260116T060001Z-abababababab.json',
    );
    expect(parseManifest(JSON.stringify(manifest), 'k')).toEqual(manifest);
    expect(() => parseManifest('{"type":"other"}', 'k')).toThrow(ArchiveFormatError);
    expect(() => parseManifest('not json', 'k')).toThrow(ArchiveFormatError);
  });
});
