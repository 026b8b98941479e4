/**
 * The fault soak (bench/lib/fault-soak.ts), large: thousands of TTL deletes with hard values and
 * one poison record of every kind per seed, through the event source mapping emulator into the
 * archive pipeline on an S3 server that fails 30% of writes, applies some PUTs it answers with an
 * error, and takes the archive prefix down for a stretch; the function throws and times out
 * before and after processing. Reliability, not speed: the goals are counts of zero.
 */
import { POISON_KINDS, runFaultSoak, type SoakFaults, type SoakResult } from '../lib/fault-soak.js';
import { fixed, goal, int, table } from '../lib/markdown.js';
import type { Suite } from '../lib/suite.js';

const SEEDS = [20_260_115, 20_260_116, 20_260_117];

const FAULTS: SoakFaults = {
  s3Errors: 0.3,
  latePuts: 0.05,
  archiveOutage: { fromPut: 40, puts: 150 },
  throwBefore: 0.02,
  throwAfter: 0.02,
  timeoutBefore: 0.01,
  timeoutAfter: 0.01,
};

/**
 * Issue 36's outage: 2,000 TTL deletes, the archive prefix down for 15 s of wall time, two attempts
 * per S3 request (so records' retries run out and valid records are dead-lettered), no function
 * faults (a lost response would explain every stray). Its dead letters must stay exact.
 */
const OUTAGE = {
  seed: SEEDS[0]!,
  records: 2_000,
  s3MaxAttempts: 2,
  faults: {
    s3Errors: 0.3,
    latePuts: 0.05,
    timedArchiveOutage: { fromPut: 8, ms: 15_000 },
    throwBefore: 0,
    throwAfter: 0,
    timeoutBefore: 0,
    timeoutAfter: 0,
  } satisfies SoakFaults,
};

/** What must stay at zero, summed over the seeds. */
const ZERO_GOALS: [string, (r: SoakResult) => number][] = [
  ['process-level errors (unhandled rejections, uncaught exceptions)', (r) => r.processErrors.length],
  ['stalls (a shard run that ended with an error)', (r) => r.stalls.length],
  ["the local S3 server's own 5xx (requests S3 would have accepted)", (r) => r.serverErrors.length],
  ['records lost', (r) => r.lost],
  ['values changed', (r) => r.mismatched],
  ['duplicates as read', (r) => r.duplicatesAsRead],
  ['poison records archived', (r) => r.poisonArchived],
  [
    'dead letters for archived records not explained by a redelivery, a failed send or a late write',
    (r) => r.strayDeadLetters.unexplained,
  ],
  [
    'records dead-lettered by a delivery that reported an earlier record failed (Lambda delivers them again)',
    (r) => r.deadLetteredPastFailure,
  ],
];

function row(label: string, values: (r: SoakResult) => string, results: readonly SoakResult[]): string[] {
  return [label, ...results.map(values)];
}

const suite: Suite = {
  name: 'fault-soak',
  title: 'Fault soak: nothing lost, no poison archived, exact dead letters',
  async run({ quick, log }) {
    const records = quick ? 2_500 : 12_500;
    const seeds = quick ? SEEDS.slice(0, 1) : SEEDS;
    const results: SoakResult[] = [];
    for (const seed of seeds) {
      log(`seed ${seed}: ${int(records)} records`);
      const result = await runFaultSoak({
        seed,
        records,
        shards: 2,
        timeoutSeconds: 3,
        faults: FAULTS,
        log,
      });
      log(
        `seed ${seed}: lost ${result.lost}, mismatched ${result.mismatched}, duplicates as read ${result.duplicatesAsRead}, poison archived ${result.poisonArchived}, strays ${result.strayDeadLetters.total} (unexplained ${result.strayDeadLetters.unexplained})`,
      );
      results.push(result);
    }
    log(`seed ${OUTAGE.seed}: ${int(OUTAGE.records)} records, the archive prefix down for 15 s`);
    const outage = await runFaultSoak({ ...OUTAGE, shards: 2, timeoutSeconds: 3, log });
    log(
      `15 s outage: strays ${outage.strayDeadLetters.total} (unexplained ${outage.strayDeadLetters.unexplained}), dead-lettered past a failure ${outage.deadLetteredPastFailure}`,
    );
    const runs = [...results, outage];
    const heading = (r: SoakResult) => (r === outage ? `seed ${r.seed}, 15 s outage` : `seed ${r.seed}`);
    const sum = (pick: (r: SoakResult) => number) => runs.reduce((n, r) => n + pick(r), 0);
    const poison = sum((r) => r.poison);
    const markdown = [
      `${int(records)} TTL deletes per seed on 2 shards (both with the same sequence numbers, as AWS allows across shards) with hard values — 38-digit numbers, exact decimals (\`1.50\`), the range's ends (\`1E-130\`, \`9.99…E+125\`), binary, string/number/binary sets, unicode, nesting to DynamoDB's 32 levels, 60 KB strings — and one poison record of each of ${POISON_KINDS.length} kinds (${POISON_KINDS.join('; ')}). They run through the event source mapping emulator (BatchSize 100, ReportBatchItemFailures, 3 s timeout) into the archive pipeline through createStreamHandler, as deployed (S3ArchiveSink + S3DeadLetterSink, retry 3 attempts; clients on SinkRetryStrategy) on a local S3 server that answers ${FAULTS.s3Errors * 100}% of PUTs and DELETEs with 500/503 without applying them, applies ${FAULTS.latePuts * 100}% of PUTs and answers them 500 (late PUTs), and answers ${FAULTS.archiveOutage?.puts} archive PUTs in a row with 503 SlowDown (an outage of the archive prefix); ${FAULTS.throwBefore * 100}% of invocations throw before processing and ${FAULTS.throwAfter * 100}% after, ${FAULTS.timeoutBefore * 100}% hang past the timeout before processing and ${FAULTS.timeoutAfter * 100}% after. Then every archived row (readArchiveRows, checksums verified) and every dead letter is read back and compared with what was sent. Issue 24's shape (tenant objects, compaction and erase beside a redelivery, windows, two soaks at once) is \`npm run soak\`, in its own section below.`,
      '',
      table(
        ['', ...runs.map(heading)],
        [
          row('records (valid + poison)', (r) => `${int(r.valid)} + ${r.poison}`, runs),
          row('invocations', (r) => int(r.invocations), runs),
          row('run time', (r) => `${fixed(r.seconds, 1)} s`, runs),
          row('S3 5xx injected', (r) => int(r.injected.s3Errors), runs),
          row('late PUTs (applied, answered 500)', (r) => int(r.injected.latePuts), runs),
          row('archive outage 503s', (r) => int(r.injected.outage), runs),
          row('throws before / after', (r) => `${r.injected.throwBefore} / ${r.injected.throwAfter}`, runs),
          row(
            'timeouts before / after',
            (r) => `${r.injected.timeoutBefore} / ${r.injected.timeoutAfter}`,
            runs,
          ),
          row('**process-level errors**', (r) => `**${r.processErrors.length}**`, runs),
          row('**stalls**', (r) => `**${r.stalls.length}**`, runs),
          row("**S3 server's own 5xx**", (r) => `**${r.serverErrors.length}**`, runs),
          row('**lost**', (r) => `**${r.lost}**`, runs),
          row('**value mismatches**', (r) => `**${r.mismatched}**`, runs),
          row('**duplicates as read**', (r) => `**${r.duplicatesAsRead}**`, runs),
          row('duplicate rows stored (removed by readArchive)', (r) => int(r.storedDuplicateRows), runs),
          row('**poison archived**', (r) => `**${r.poisonArchived}**`, runs),
          row('poison dead-lettered (malformed)', (r) => `${r.poisonDeadLettered} of ${r.poison}`, runs),
          row('valid records dead-lettered (retries exhausted)', (r) => int(r.validDeadLettered), runs),
          row('dead letters for archived records', (r) => int(r.strayDeadLetters.total), runs),
          row('… a delivery whose response was lost', (r) => int(r.strayDeadLetters.responseLost), runs),
          row(
            '… archived by a delivery that reported an earlier record failed, dead-lettered by its redelivery',
            (r) => int(r.strayDeadLetters.afterFailure),
            runs,
          ),
          row('… a failed dead-letter send', (r) => int(r.strayDeadLetters.failedSend), runs),
          row('… an archive PUT applied late', (r) => int(r.strayDeadLetters.latePut), runs),
          row('**… unexplained**', (r) => `**${r.strayDeadLetters.unexplained}**`, runs),
          row(
            '**dead-lettered by a delivery that reported an earlier record failed**',
            (r) => `**${r.deadLetteredPastFailure}**`,
            runs,
          ),
        ],
        ['left', ...runs.map(() => 'right' as const)],
      ),
      '',
      `A dead letter for an archived record is at-least-once delivery showing, and the table names the cause of each: Lambda delivered a batch again after a response was lost (the function failed or timed out after writing, so one delivery archived the record and another dead-lettered it), a delivery archived the record and reported an earlier one failed (Lambda delivers everything from the reported record on again, and the redelivery's writes of it failed to the end: the dead letter is exact for that delivery, and the pipeline cannot know an earlier delivery wrote the record), a dead-letter send failed (a PUT of the entry S3 applied though it answered with an error, or an entry whose delete failed: S3DeadLetterSink deletes what it sent from the first failure on), or an archive PUT landed after the client gave up on it. A partial dead-letter send leaves nothing else behind: the batch fails from the first entry not stored. No delivery dead-letters a record at or after the sequence number its response reports (Lambda delivers that record again): the dead-letter stage decides once every lane is done, against the reported sequence number. The last column is issue 36's outage: ${int(OUTAGE.records)} TTL deletes with the archive prefix down for ${OUTAGE.faults.timedArchiveOutage.ms / 1000} s of wall time, ${OUTAGE.s3MaxAttempts} attempts per S3 request, no function faults. Each entry is keyed by its record (\`<sequenceNumber>-<eventID>\`), and a replay of dead letters skips what the archive holds (docs/sinks.md, "Replaying dead letters").`,
      '',
      ...ZERO_GOALS.map(([label, pick]) => goal(label, sum(pick), 0, false, int)),
      goal(
        'poison records dead-lettered',
        sum((r) => r.poisonDeadLettered),
        poison,
        true,
        int,
      ),
    ].join('\n');
    return { markdown, data: { records, faults: FAULTS, results, outage: { ...OUTAGE, result: outage } } };
  },
};

export default suite;
