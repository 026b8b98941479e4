import {
  compileFilterCriteria,
  compilePattern,
  eventNames,
  filterPattern,
  keyAttribute,
  newImageAttribute,
  toFilterCriteria,
  ttlDeletes,
  userDeletes,
} from '../../src/filters/index.js';
import type { LambdaStreamRecord } from '../../src/records/index.js';

/**
 * Filter evaluator throughput against a hand-written predicate over the same records: the cost of
 * evaluating event-ruler semantics generically instead of writing the `if` by hand.
 */
function records(count: number): LambdaStreamRecord[] {
  const out: LambdaStreamRecord[] = [];
  for (let i = 0; i < count; i++) {
    const kind = i % 4;
    const status = ['active', 'inactive', 'pending'][i % 3] as string;
    const r: LambdaStreamRecord = {
      eventID: `e${i}`,
      eventName: kind === 0 ? 'INSERT' : kind === 1 ? 'MODIFY' : 'REMOVE',
      eventSource: 'aws:dynamodb',
      awsRegion: 'us-east-1',
      dynamodb: {
        ApproximateCreationDateTime: 1_700_000_000 + i,
        Keys: { pk: { S: `${i % 2 ? 'USER' : 'ORDER'}#${i}` } },
        NewImage: {
          pk: { S: `USER#${i}` },
          status: { S: status },
          price: { N: String(i % 100) },
          tags: { SS: ['a', 'b'] },
        },
        SequenceNumber: String(1000 + i),
        SizeBytes: 120,
        StreamViewType: 'NEW_AND_OLD_IMAGES',
      },
    };
    if (kind === 3) r.userIdentity = { type: 'Service', principalId: 'dynamodb.amazonaws.com' };
    out.push(r);
  }
  return out;
}

function opsPerSecond(
  fn: (r: LambdaStreamRecord) => boolean,
  input: LambdaStreamRecord[],
  rounds: number,
): { ops: number; hits: number } {
  let hits = 0;
  for (const r of input) if (fn(r)) hits++; // warm-up
  hits = 0;
  const start = process.hrtime.bigint();
  for (let k = 0; k < rounds; k++)
    for (let i = 0; i < input.length; i++) if (fn(input[i] as LambdaStreamRecord)) hits++;
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  return { ops: (rounds * input.length) / seconds, hits };
}

export default {
  name: 'filters',
  title: 'Filter evaluation',
  async run({
    quick,
    log,
  }: {
    quick: boolean;
    log: (m: string) => void;
  }): Promise<{ markdown: string; data: unknown }> {
    const input = records(quick ? 2_000 : 20_000);
    const rounds = quick ? 20 : 100;
    const cases: {
      name: string;
      compiled: (r: LambdaStreamRecord) => boolean;
      byHand: (r: LambdaStreamRecord) => boolean;
    }[] = [
      {
        name: 'ttlDeletes()',
        compiled: compilePattern(ttlDeletes()),
        byHand: (r) =>
          r.eventName === 'REMOVE' &&
          r.userIdentity?.type === 'Service' &&
          r.userIdentity.principalId === 'dynamodb.amazonaws.com',
      },
      {
        name: 'userDeletes()',
        compiled: compilePattern(userDeletes()),
        byHand: (r) => r.eventName === 'REMOVE' && r.userIdentity?.principalId !== 'dynamodb.amazonaws.com',
      },
      {
        name: 'INSERT or MODIFY, pk prefix, status, tag',
        compiled: compilePattern(
          filterPattern(
            eventNames('INSERT', 'MODIFY'),
            keyAttribute('pk').S.prefix('USER#'),
            newImageAttribute('status').S.equals('active', 'pending'),
            newImageAttribute('tags').SS.contains('b'),
          ),
        ),
        byHand: (r) =>
          (r.eventName === 'INSERT' || r.eventName === 'MODIFY') &&
          (r.dynamodb.Keys.pk?.S?.startsWith('USER#') ?? false) &&
          (r.dynamodb.NewImage?.status?.S === 'active' || r.dynamodb.NewImage?.status?.S === 'pending') &&
          (r.dynamodb.NewImage?.tags?.SS?.includes('b') ?? false),
      },
      {
        name: '3 filters (TTL, INSERT, status) OR-ed',
        compiled: compileFilterCriteria(
          toFilterCriteria([
            ttlDeletes(),
            eventNames('INSERT'),
            newImageAttribute('status').S.anythingBut('inactive'),
          ]),
        ),
        byHand: (r) =>
          (r.eventName === 'REMOVE' &&
            r.userIdentity?.type === 'Service' &&
            r.userIdentity.principalId === 'dynamodb.amazonaws.com') ||
          r.eventName === 'INSERT' ||
          (r.dynamodb.NewImage?.status?.S !== undefined && r.dynamodb.NewImage.status.S !== 'inactive'),
      },
    ];
    const rows: string[] = [];
    const data: unknown[] = [];
    for (const c of cases) {
      const compiled = opsPerSecond(c.compiled, input, rounds);
      const byHand = opsPerSecond(c.byHand, input, rounds);
      if (compiled.hits !== byHand.hits)
        throw new Error(`${c.name}: compiled pattern and predicate disagree`);
      const ratio = byHand.ops / compiled.ops;
      log(
        `${c.name}: ${(compiled.ops / 1e6).toFixed(1)} M/s compiled, ${(byHand.ops / 1e6).toFixed(1)} M/s by hand`,
      );
      rows.push(
        `| ${c.name} | ${(compiled.ops / 1e6).toFixed(1)} | ${(byHand.ops / 1e6).toFixed(1)} | ${ratio.toFixed(2)}× |`,
      );
      data.push({
        case: c.name,
        compiledOpsPerSec: compiled.ops,
        handOpsPerSec: byHand.ops,
        handOverCompiled: ratio,
      });
    }
    const markdown = [
      `Records per second through \`compilePattern\` vs a hand-written \`if\` selecting the same records (${input.length} generated Lambda records × ${rounds} rounds; results checked equal).`,
      '',
      '| pattern | compiled (M rec/s) | hand-written (M rec/s) | hand ÷ compiled |',
      '|---|---:|---:|---:|',
      ...rows,
    ].join('\n');
    return { markdown, data };
  },
};
