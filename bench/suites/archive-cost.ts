/**
 * What archiving 1M TTL-expired records costs at different batch sizes, against one object per
 * record; and what the change log (every insert, modify and delete, docs/archive.md) costs per 1M
 * changes of a realistic mix. Bytes are measured by encoding realistic records with the sink's own
 * encoder; request and storage costs use the prices stated below.
 */
import { planArchiveObjects } from '../../src/archive/objects.js';
import type { ClassifiedRecord } from '../../src/records/types.js';
import {
  SAMPLE_CHANGE_MIX,
  type SampleRecordOptions,
  sampleChanges,
  sampleTtlDeletes,
} from '../../src/sinks/sample-records.js';

const RECORDS = 1_000_000;
const KB = 1024;
const GB = 1024 ** 3;

/**
 * S3 prices, us-east-1, as published on aws.amazon.com/s3/pricing (assumed unchanged as of
 * 2026-11-22): storage per GB-month and PUT/COPY/POST/LIST per 1,000 requests. GLACIER and
 * DEEP_ARCHIVE add 40 KB of billed overhead per object (8 KB at the STANDARD rate, 32 KB at the
 * class rate); STANDARD_IA and GLACIER_IR bill at least 128 KB per object.
 */
const PRICES = [
  { cls: 'STANDARD', gbMonth: 0.023, perThousandPut: 0.005, minObject: 0, overheadStd: 0, overheadCls: 0 },
  {
    cls: 'STANDARD_IA',
    gbMonth: 0.0125,
    perThousandPut: 0.01,
    minObject: 128 * KB,
    overheadStd: 0,
    overheadCls: 0,
  },
  {
    cls: 'GLACIER_IR',
    gbMonth: 0.004,
    perThousandPut: 0.02,
    minObject: 128 * KB,
    overheadStd: 0,
    overheadCls: 0,
  },
  {
    cls: 'GLACIER',
    gbMonth: 0.0036,
    perThousandPut: 0.03,
    minObject: 0,
    overheadStd: 8 * KB,
    overheadCls: 32 * KB,
  },
  {
    cls: 'DEEP_ARCHIVE',
    gbMonth: 0.00099,
    perThousandPut: 0.05,
    minObject: 0,
    overheadStd: 8 * KB,
    overheadCls: 32 * KB,
  },
] as const;
const STANDARD_GB_MONTH = 0.023;

interface Scenario {
  label: string;
  batch: number;
  objects: number;
  puts: number;
  bytesPerObject: number;
  bytesStored: number;
}

type Sampler = (count: number, options: SampleRecordOptions) => ClassifiedRecord[];

/** Gzip bytes of one object of `batch` records, averaged over `samples` objects. */
function measure(batch: number, samples: number, sample: Sampler = sampleTtlDeletes): number {
  let total = 0;
  for (let s = 0; s < samples; s++) {
    // Records 1 s apart in one hour and shard: one object per batch, as in steady state.
    const records = sample(batch, {
      start: s * batch,
      spacingSeconds: batch > 3_600 ? 3_600 / batch : 1,
    });
    const { objects } = planArchiveObjects(records, {
      prefix: 'archive',
      ttlAttribute: 'ttl',
      maxObjectBytes: 64 * 1024 * 1024,
      table: undefined,
    });
    for (const o of objects) total += o.body.length;
    if (objects.length !== 1)
      throw new Error(`expected one object per batch of ${batch}, got ${objects.length}`);
  }
  return total / samples;
}

function money(value: number): string {
  return value >= 100 ? `$${value.toFixed(0)}` : value >= 1 ? `$${value.toFixed(2)}` : `$${value.toFixed(4)}`;
}

function mb(value: number): string {
  return `${(value / (1024 * 1024)).toFixed(1)} MiB`;
}

export default {
  name: 'archive-cost',
  title: 'Archive cost per 1M records',
  async run({
    quick,
    log,
  }: {
    quick: boolean;
    log: (m: string) => void;
  }): Promise<{ markdown: string; data: unknown }> {
    const sizes = [1, 100, 1_000, 10_000];
    const scenarios: Scenario[] = [];
    for (const batch of sizes) {
      const samples =
        batch === 1 ? (quick ? 200 : 2_000) : batch === 10_000 ? (quick ? 1 : 3) : quick ? 5 : 20;
      const bytesPerObject = measure(batch, samples);
      const objects = Math.ceil(RECORDS / batch);
      scenarios.push({
        label: batch === 1 ? 'one object per record' : `batch ${batch.toLocaleString('en-US')}`,
        batch,
        objects,
        puts: objects,
        bytesPerObject,
        bytesStored: bytesPerObject * objects,
      });
      log(`batch ${batch}: ${bytesPerObject.toFixed(0)} B per object`);
    }

    const cost = (s: Scenario) =>
      PRICES.map((p) => {
        const billedPerObject = Math.max(s.bytesPerObject, p.minObject) + p.overheadCls;
        const storage =
          ((billedPerObject * s.objects) / GB) * p.gbMonth +
          ((p.overheadStd * s.objects) / GB) * STANDARD_GB_MONTH;
        const puts = (s.puts / 1000) * p.perThousandPut;
        return { cls: p.cls, storagePerMonth: storage, putsOnce: puts };
      });

    const rows = scenarios.map((s) => ({ ...s, costs: cost(s) }));
    // The change log: the same sink, every change of a realistic mix (modifies carry both images).
    const changeLog = [100, 1_000].map((batch) => {
      const bytesPerObject = measure(batch, quick ? 5 : 20, sampleChanges);
      const objects = Math.ceil(RECORDS / batch);
      log(`change log, batch ${batch}: ${bytesPerObject.toFixed(0)} B per object`);
      const scenario: Scenario = {
        label: `change log, batch ${batch.toLocaleString('en-US')}`,
        batch,
        objects,
        puts: objects,
        bytesPerObject,
        bytesStored: bytesPerObject * objects,
      };
      return { ...scenario, costs: cost(scenario) };
    });
    const base = rows[0] as (typeof rows)[number];
    const lines: string[] = [];
    lines.push(
      'Archiving 1,000,000 TTL-deleted records (realistic items: composite key, 38-digit numbers, binary, set, map, list; ' +
        `~${Math.round(base.bytesPerObject ?? 0)} B gzip as a single-record object) with the S3 archive sink's own encoder.`,
      '',
      '| layout | PUT requests | objects | bytes stored (gzip) | bytes / record |',
      '|---|--:|--:|--:|--:|',
    );
    for (const r of rows) {
      lines.push(
        `| ${r.label} | ${r.puts.toLocaleString('en-US')} | ${r.objects.toLocaleString('en-US')} | ${mb(r.bytesStored)} | ${(r.bytesStored / RECORDS).toFixed(1)} |`,
      );
    }
    lines.push('', 'Estimated cost: one-time PUTs + storage per month, per storage class.', '');
    lines.push(
      `| layout | ${PRICES.map((p) => p.cls).join(' | ')} |`,
      `|---|${PRICES.map(() => '--:').join('|')}|`,
    );
    for (const r of rows) {
      lines.push(
        `| ${r.label} | ${r.costs.map((c) => `${money(c.putsOnce)} + ${money(c.storagePerMonth)}/mo`).join(' | ')} |`,
      );
    }
    const mix = SAMPLE_CHANGE_MIX;
    const cycle = mix.insert + mix.modify + mix.delete;
    const pct = (n: number) => `${Math.round((n / cycle) * 100)}%`;
    const ttlAt1000 = rows.find((r) => r.batch === 1_000) as (typeof rows)[number];
    lines.push(
      '',
      `**Change log** (every change, docs/archive.md): 1,000,000 changes, ${pct(mix.modify)} modifies (both images), ` +
        `${pct(mix.insert)} inserts (new image), ${pct(mix.delete)} deletes (old image; two in three TTL), of the same items, ` +
        'through the same sink, before compaction (which only merges objects: the bytes stay, the PUTs are paid).',
      '',
      '| layout | PUT requests | bytes stored (gzip) | bytes / change | × the TTL archive per record |',
      '|---|--:|--:|--:|--:|',
    );
    for (const r of changeLog)
      lines.push(
        `| ${r.label} | ${r.puts.toLocaleString('en-US')} | ${mb(r.bytesStored)} | ${(r.bytesStored / RECORDS).toFixed(1)} | ` +
          `${(r.bytesStored / ttlAt1000.bytesStored).toFixed(2)}× |`,
      );
    lines.push(
      '',
      `| change log | ${PRICES.map((p) => p.cls).join(' | ')} |`,
      `|---|${PRICES.map(() => '--:').join('|')}|`,
    );
    for (const r of changeLog)
      lines.push(
        `| ${r.label} | ${r.costs.map((c) => `${money(c.putsOnce)} + ${money(c.storagePerMonth)}/mo`).join(' | ')} |`,
      );
    const at1000 = rows.find((r) => r.batch === 1_000) as (typeof rows)[number];
    const deep = (r: (typeof rows)[number]) =>
      r.costs.find((c) => c.cls === 'DEEP_ARCHIVE') as { putsOnce: number; storagePerMonth: number };
    lines.push(
      '',
      `At batch 1,000: **${at1000.puts.toLocaleString('en-US')} PUTs per 1M records** (goal ≤ 1,000), ` +
        `${(base.puts / at1000.puts).toFixed(0)}× fewer than one object per record; in DEEP_ARCHIVE the per-object 40 KB overhead ` +
        `makes one-object-per-record storage ${(deep(base).storagePerMonth / deep(at1000).storagePerMonth).toFixed(0)}× the batched cost per month.`,
      '',
      'Prices: S3 us-east-1 list prices (storage per GB-month: STANDARD $0.023, STANDARD_IA $0.0125, GLACIER_IR $0.004, ' +
        'GLACIER $0.0036, DEEP_ARCHIVE $0.00099; PUT per 1,000: $0.005 / $0.01 / $0.02 / $0.03 / $0.05), assumed current on 2026-11-22. ' +
        'STANDARD_IA and GLACIER_IR bill a 128 KB minimum per object; GLACIER and DEEP_ARCHIVE add 40 KB per object ' +
        '(8 KB at STANDARD, 32 KB at the class rate). Not included: minimum storage durations, retrieval, lifecycle transitions, KMS requests.',
    );
    return {
      markdown: lines.join('\n'),
      data: { records: RECORDS, prices: PRICES, scenarios: rows, changeLog: { mix, scenarios: changeLog } },
    };
  },
};
