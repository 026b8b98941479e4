/**
 * `npm run soak -- [--seed <n>]... [--records <n>] [--side-by-side]`
 *
 * The fault soak of issue 24, large: TTL deletes over 20 tenants through the event source mapping
 * emulator into createStreamHandler's archive pipeline (S3ArchiveSink with partitionBy and
 * maxPartitionsPerBatch 8, S3DeadLetterSink), on a local S3 server failing 30% of PUTs and
 * DELETEs (and 10% more of DELETEs), with function crashes and hangs; then every shard is
 * redelivered from its start while compactArchive and eraseTenant run; then createWindowHandler's
 * totals in tumbling windows under the same kind of faults; then votes through VoteCounter while
 * aggregateVotes runs on a schedule, on DynamoDB Local with throttles and 500s before and after
 * the write applied and aggregator runs crashing mid-way (bench/lib/vote-soak.ts). Per seed it prints the
 * figures that must be zero — process-level errors, stalls, lost, duplicates as read, the server's
 * own 5xx answers — as a JSON line on stdout, and exits 1 when any is not.
 *
 * `--side-by-side` runs each seed in its own process, all at once (CPU contention: two soaks on
 * two cores is how the escape of issue 24 showed), and reports each child's figures; a child
 * that dies counts as a process-level error.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { noneInjected, runFaultSoak, type SoakFaults, type SoakResult } from './lib/fault-soak.js';
import { runVoteSoak, type VoteSoakFaults, type VoteSoakResult } from './lib/vote-soak.js';
import { runWindowSoak } from './lib/window-soak.js';

export const ISSUE_24_FAULTS: SoakFaults = {
  s3Errors: 0.3,
  deleteErrors: 0.1,
  latePuts: 0.05,
  throwBefore: 0.03,
  throwAfter: 0.03,
  timeoutBefore: 0.01,
  timeoutAfter: 0.01,
};

/** Shares of DynamoDB requests failed before sending and after applying; aggregator runs crashing. */
export const ISSUE_24_VOTE_FAULTS: VoteSoakFaults = { before: 0.1, after: 0.05, aggregatorCrash: 0.3 };

/** What one seed reports; every count but `records` must be 0. */
export interface SoakFigures {
  seed: number;
  records: number;
  seconds: number;
  processErrors: number;
  stalls: number;
  lost: number;
  duplicatesAsRead: number;
  serverErrors: number;
  mismatched: number;
  poisonArchived: number;
  erasedTenantRowsLeft: number;
  unexplainedStrays: number;
  /** createWindowHandler's stored totals against what was sent: records and sum off. */
  windowCountOff: number;
  windowSumOff: number;
  /**
   * The votes soak: votes or aggregator runs failing otherwise than documented; the exact poll's
   * counted − cast and its markers off; the bare poll's count the at-most-once rule leaves
   * unexplained; Σ |total − its shards| after the last aggregation.
   */
  voteUnexpectedErrors: number;
  voteExactCountOff: number;
  voteExactMarkersOff: number;
  voteBareUnexplained: number;
  voteTotalOff: number;
  /** Not goals: what the run went through. */
  detail: {
    invocations: number;
    injected: SoakResult['injected'];
    validDeadLettered: number;
    maintenanceFailedUnderFaults: string[];
    windowSegments: number;
    votes: number;
    voteDetail: VoteSoakResult['detail'] | undefined;
    samples: string[];
  };
}

const GOALS = [
  'processErrors',
  'stalls',
  'lost',
  'duplicatesAsRead',
  'serverErrors',
  'mismatched',
  'poisonArchived',
  'erasedTenantRowsLeft',
  'unexplainedStrays',
  'windowCountOff',
  'windowSumOff',
  'voteUnexpectedErrors',
  'voteExactCountOff',
  'voteExactMarkersOff',
  'voteBareUnexplained',
  'voteTotalOff',
] as const satisfies readonly (keyof SoakFigures)[];

export async function soakOnce(
  seed: number,
  records: number,
  log: (m: string) => void,
): Promise<SoakFigures> {
  const r = await runFaultSoak({
    seed,
    records,
    shards: 2,
    tenants: 20,
    maxPartitionsPerBatch: 8,
    compactAndEraseDuringRedelivery: true,
    timeoutSeconds: 2,
    s3MaxAttempts: 8,
    faults: ISSUE_24_FAULTS,
    log,
  });
  log('windows: createWindowHandler in 60-second tumbling windows under the same kind of faults');
  const w = await runWindowSoak({
    seed,
    records: Math.max(100, Math.round(records / 5)),
    shards: 2,
    timeoutSeconds: 2,
    faults: { s3Errors: 0.3, latePuts: 0.05, throwBefore: 0.03, throwAfter: 0.03, hang: 0.01 },
  });
  log('votes: VoteCounter and aggregateVotes on DynamoDB Local under client faults and aggregator crashes');
  const v = await runVoteSoak({
    seed,
    votes: Math.max(50, Math.round(records / 10)),
    contestants: 20,
    shards: 5,
    concurrency: 16,
    faults: ISSUE_24_VOTE_FAULTS,
  });
  return {
    seed,
    records,
    seconds: Math.round((r.seconds + v.seconds) * 10) / 10,
    processErrors: r.processErrors.length + w.processErrors.length + v.processErrors.length,
    stalls: r.stalls.length + w.stalls.length + v.stalls.length,
    lost: r.lost,
    duplicatesAsRead: r.duplicatesAsRead,
    serverErrors: r.serverErrors.length + w.serverErrors.length,
    mismatched: r.mismatched,
    poisonArchived: r.poisonArchived,
    erasedTenantRowsLeft: r.maintenance?.erasedTenantRowsLeft ?? 0,
    unexplainedStrays: r.strayDeadLetters.unexplained,
    windowCountOff: w.countOff,
    windowSumOff: w.sumOff,
    voteUnexpectedErrors: v.unexpectedErrors.length,
    voteExactCountOff: v.exactCountOff,
    voteExactMarkersOff: v.exactMarkersOff,
    voteBareUnexplained: v.bareUnexplained,
    voteTotalOff: v.totalOff,
    detail: {
      invocations: r.invocations,
      injected: r.injected,
      validDeadLettered: r.validDeadLettered,
      maintenanceFailedUnderFaults: r.maintenance?.failedRuns ?? [],
      windowSegments: w.segments,
      votes: v.votes,
      voteDetail: v.detail,
      samples: [
        ...r.processErrors,
        ...w.processErrors,
        ...v.processErrors,
        ...v.unexpectedErrors,
        ...r.stalls,
        ...w.stalls,
        ...v.stalls,
        ...r.serverErrors,
        ...w.serverErrors,
        ...r.unexplainedStrays,
      ].slice(0, 5),
    },
  };
}

export function failedGoals(figures: SoakFigures): string[] {
  return GOALS.filter((goal) => figures[goal] !== 0).map((goal) => `${goal} ${figures[goal]}`);
}

/** One child per seed, all at once; a child that dies or prints no figures is a process-level error. */
async function sideBySide(seeds: number[], records: number): Promise<SoakFigures[]> {
  const self = fileURLToPath(import.meta.url);
  return Promise.all(
    seeds.map(
      (seed) =>
        new Promise<SoakFigures>((resolve) => {
          const child = spawn(
            process.execPath,
            [...process.execArgv, self, '--seed', String(seed), '--records', String(records)],
            { stdio: ['ignore', 'pipe', 'inherit'] },
          );
          let out = '';
          child.stdout.on('data', (chunk: Buffer) => {
            out += chunk.toString('utf8');
          });
          child.on('close', (code) => {
            const line = out.trim().split('\n').at(-1) ?? '';
            try {
              resolve(JSON.parse(line) as SoakFigures);
            } catch {
              resolve({
                ...emptyFigures(seed, records),
                processErrors: 1,
                detail: { ...emptyFigures(seed, records).detail, samples: [`child exited ${code}`] },
              });
            }
          });
        }),
    ),
  );
}

function emptyFigures(seed: number, records: number): SoakFigures {
  return {
    seed,
    records,
    seconds: 0,
    processErrors: 0,
    stalls: 0,
    lost: 0,
    duplicatesAsRead: 0,
    serverErrors: 0,
    mismatched: 0,
    poisonArchived: 0,
    erasedTenantRowsLeft: 0,
    unexplainedStrays: 0,
    windowCountOff: 0,
    windowSumOff: 0,
    voteUnexpectedErrors: 0,
    voteExactCountOff: 0,
    voteExactMarkersOff: 0,
    voteBareUnexplained: 0,
    voteTotalOff: 0,
    detail: {
      invocations: 0,
      injected: noneInjected(),
      validDeadLettered: 0,
      maintenanceFailedUnderFaults: [],
      windowSegments: 0,
      votes: 0,
      voteDetail: undefined,
      samples: [],
    },
  };
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      seed: { type: 'string', multiple: true },
      records: { type: 'string', default: '3000' },
      'side-by-side': { type: 'boolean', default: false },
    },
  });
  const seeds = (values.seed ?? ['24']).map(Number);
  const records = Number(values.records);
  if (seeds.some((s) => !Number.isInteger(s)) || !Number.isInteger(records) || records < 100)
    throw new Error('usage: soak.ts [--seed <integer>]... [--records <integer >= 100>] [--side-by-side]');
  const log = (message: string) => process.stderr.write(`  [soak] ${message}\n`);
  const results: SoakFigures[] = values['side-by-side'] ? await sideBySide(seeds, records) : [];
  if (!values['side-by-side'])
    for (const seed of seeds) results.push(await soakOnce(seed, records, (m) => log(`seed ${seed}: ${m}`)));
  let failed = false;
  for (const figures of results) {
    const goals = failedGoals(figures);
    failed ||= goals.length > 0;
    log(`seed ${figures.seed}: ${goals.length === 0 ? 'every goal 0' : `NOT ZERO: ${goals.join(', ')}`}`);
    process.stdout.write(`${JSON.stringify(figures)}\n`);
  }
  // A run's servers and clients are closed; timers a sink left behind must not hold the exit.
  process.exit(failed ? 1 : 0);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await main();
