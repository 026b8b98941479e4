// What the TTL archive's deploy settings must satisfy, however they are deployed: `npm run package`
// checks the serverless service's packaged template with these rules (scripts/package.js imports
// the built copy), the CDK's TtlArchive checks its props with them, so the two cannot disagree.
// Each broken rule would deploy a wider grant than meant, lose data, or deploy a function whose
// cold start or first compaction fails. One message per problem, naming the settings as the
// caller names them (`names`). Kept free of imports but the key prefix rule, so it bundles alone.

import { keyPrefixProblem } from './key-prefix.js';

/** The settings the rules name, one key each; the caller says what each is called where it is set. */
export type ArchiveSettingNames = Readonly<
  Record<
    | 'archivePrefix'
    | 'deadLetterPrefix'
    | 'storageClass'
    | 'glacierAfterDays'
    | 'deepArchiveAfterDays'
    | 'noncurrentExpireAfterDays'
    | 'deadLetterAfterAge'
    | 'maxRecordAge'
    | 'closedAfter'
    | 'lookbackHours',
    string
  >
>;

/**
 * The settings as the rules read them: days, seconds and hours as numbers. `unknown` where a
 * packaged template may hold anything (nothing, a word): the rules check the type too. Seconds
 * and hours may be numeric strings, as a function's environment holds them; lifecycle days are
 * template numbers.
 */
export interface ArchiveRuleInput {
  readonly archivePrefix: unknown;
  readonly deadLetterPrefix: unknown;
  /** The archive prefix's lifecycle rule; absent when the template has none. */
  readonly lifecycle?: {
    readonly glacierAfterDays: unknown;
    readonly deepArchiveAfterDays: unknown;
    /** When noncurrent versions move to GLACIER. */
    readonly noncurrentGlacierAfterDays: unknown;
    readonly noncurrentExpireAfterDays: unknown;
  };
  /** When a failing record is dead-lettered with its content; absent when not set. */
  readonly deadLetterAfterAgeSeconds?: unknown;
  /** The stream mapping's maximum record age; absent when records never age out. */
  readonly maxRecordAgeSeconds?: number;
  /** Present when compaction is scheduled. */
  readonly compaction?: {
    /** The storage class the archive writes, which compaction reads. */
    readonly storageClass: unknown;
    readonly closedAfterSeconds: unknown;
    readonly lookbackHours: unknown;
  };
}

const isWholeNumber = (value: unknown, min: number): value is number =>
  Number.isInteger(value) && (value as number) >= min;

/** The problems of `s`, one message each, settings named by `names` (empty when fine). */
export function archiveRuleProblems(s: ArchiveRuleInput, names: ArchiveSettingNames): string[] {
  const problems: string[] = [];
  for (const key of ['archivePrefix', 'deadLetterPrefix'] as const) {
    const problem = keyPrefixProblem(s[key]);
    if (problem !== undefined) problems.push(`${names[key]} ${problem}`);
  }
  problems.push(...prefixOverlap(s, names));
  const lifecycle = s.lifecycle;
  if (lifecycle !== undefined) {
    const { glacierAfterDays: glacier, deepArchiveAfterDays: deepArchive } = lifecycle;
    if (!isWholeNumber(glacier, 0) || !isWholeNumber(deepArchive, 0) || !(deepArchive > glacier))
      problems.push(
        `${names.glacierAfterDays} ${JSON.stringify(glacier)} and ${names.deepArchiveAfterDays} ${JSON.stringify(deepArchive)} ` +
          'must be whole days with DEEP_ARCHIVE after GLACIER (S3 refuses transitions out of order)',
      );
    const { noncurrentGlacierAfterDays: noncurrentGlacier, noncurrentExpireAfterDays: noncurrentExpire } =
      lifecycle;
    if (!isWholeNumber(noncurrentExpire, 1) || !(noncurrentExpire > (noncurrentGlacier as number)))
      problems.push(
        `${names.noncurrentExpireAfterDays} ${JSON.stringify(noncurrentExpire)} must be a whole number of days after ` +
          `the noncurrent GLACIER transition (${JSON.stringify(noncurrentGlacier)})`,
      );
  }
  const maxAge = s.maxRecordAgeSeconds;
  const deadLetterAfter = Number(s.deadLetterAfterAgeSeconds);
  if (
    s.deadLetterAfterAgeSeconds !== undefined &&
    maxAge !== undefined &&
    !(isWholeNumber(deadLetterAfter, 1) && deadLetterAfter < maxAge)
  )
    problems.push(
      `${names.deadLetterAfterAge} ${JSON.stringify(s.deadLetterAfterAgeSeconds)} must be a whole number of seconds below ${names.maxRecordAge} (${maxAge}): ` +
        'a failing record is dead-lettered with its content before Lambda gives up on it and keeps only its position',
    );
  if (s.compaction !== undefined)
    problems.push(...compactionProblems(s.compaction, lifecycle?.glacierAfterDays, maxAge, names));
  return problems;
}

/**
 * Lifecycle prefixes are plain string prefixes (an empty one is the whole bucket): one inside the
 * other would move dead letters to Glacier, out of reach of a redrive, or expire archives with
 * the dead letters.
 */
function prefixOverlap(s: ArchiveRuleInput, names: ArchiveSettingNames): string[] {
  const { archivePrefix, deadLetterPrefix } = s;
  if (typeof archivePrefix !== 'string' || typeof deadLetterPrefix !== 'string') return [];
  const whole = (prefix: string) => (prefix === '' ? ' (an empty prefix is the whole bucket)' : '');
  if (deadLetterPrefix.startsWith(archivePrefix))
    return [
      `${names.deadLetterPrefix} ${JSON.stringify(deadLetterPrefix)} is inside ${names.archivePrefix} ${JSON.stringify(archivePrefix)}${whole(archivePrefix)}; ` +
        'the archive lifecycle would move dead letters to Glacier, then Deep Archive, out of reach of a redrive',
    ];
  if (archivePrefix.startsWith(deadLetterPrefix))
    return [
      `${names.archivePrefix} ${JSON.stringify(archivePrefix)} is inside ${names.deadLetterPrefix} ${JSON.stringify(deadLetterPrefix)}${whole(deadLetterPrefix)}; ` +
        'the dead-letter lifecycle would expire archives with the dead letters',
    ];
  return [];
}

/**
 * Compaction must reach every hour while its objects are readable: an hour is compacted from
 * closedAfter after its end until lookbackHours later, and the lifecycle moves objects to GLACIER
 * glacierAfterDays after they are written (from the hour's start at the earliest) — a day of
 * margin, as S3 runs lifecycle rules once a day. It reads what the archive writes, so that must
 * not be GLACIER / DEEP_ARCHIVE; and an hour is closed only once Lambda no longer redelivers into
 * it (the mapping's maximum record age). The compaction handler refuses a closedAfter below an hour.
 */
function compactionProblems(
  compaction: NonNullable<ArchiveRuleInput['compaction']>,
  glacierDays: unknown,
  maxAge: number | undefined,
  names: ArchiveSettingNames,
): string[] {
  const { storageClass, closedAfterSeconds, lookbackHours } = compaction;
  const after = Number(closedAfterSeconds);
  const lookback = Number(lookbackHours);
  if (!isWholeNumber(after, 3600) || !isWholeNumber(lookback, 1))
    return [
      `${names.closedAfter} ${JSON.stringify(closedAfterSeconds)} must be a whole number of seconds, at least 3600, ` +
        `and ${names.lookbackHours} ${JSON.stringify(lookbackHours)} a whole number of hours, at least 1`,
    ];
  const problems: string[] = [];
  const lastHours = 1 + after / 3600 + lookback;
  if (isWholeNumber(glacierDays, 0) && lastHours + 24 > glacierDays * 24)
    problems.push(
      `${names.closedAfter} (${after}) + ${names.lookbackHours} (${lookback}) reach ${Math.ceil(lastHours)} hours after an hour starts, ` +
        `within a day of ${names.glacierAfterDays} (${glacierDays}): compaction would meet objects the lifecycle already moved to GLACIER`,
    );
  if (storageClass === 'GLACIER' || storageClass === 'DEEP_ARCHIVE')
    problems.push(
      `${names.storageClass} ${storageClass}: compaction cannot read objects that need a restore; write STANDARD ` +
        `(or STANDARD_IA / GLACIER_IR) and let the lifecycle move compacted hours to GLACIER after ${names.glacierAfterDays}`,
    );
  if (maxAge !== undefined && after < maxAge)
    problems.push(
      `${names.closedAfter} (${after}) is below ${names.maxRecordAge} (${maxAge}): ` +
        'Lambda may still redeliver into an hour compaction counts as closed',
    );
  return problems;
}
