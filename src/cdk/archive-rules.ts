// What a TtlArchive's settings must satisfy, the rules `npm run package` applies to the serverless
// service (scripts/package.js): each would otherwise deploy a wider grant than meant, lose data,
// or make a stack CloudFormation rolls back. One message per problem, naming the option.
import { isKeyPrefix, KEY_PREFIX_RULE } from '../handlers/key-prefix.js';

export interface ArchiveRuleInput {
  readonly archivePrefix: string;
  readonly deadLetterPrefix: string;
  readonly storageClass: string;
  readonly glacierAfterDays: number;
  readonly deepArchiveAfterDays: number;
  readonly noncurrentExpireAfterDays: number;
  readonly deadLetterAfterAgeSeconds: number;
  readonly maxRecordAgeSeconds: number;
  /** Present when compaction is scheduled. */
  readonly compaction?: { readonly closedAfterSeconds: number; readonly lookbackHours: number };
}

export function archiveRuleProblems(s: ArchiveRuleInput): string[] {
  const problems: string[] = [];
  for (const key of ['archivePrefix', 'deadLetterPrefix'] as const)
    if (!isKeyPrefix(s[key]))
      problems.push(`option '${key}' must be ${KEY_PREFIX_RULE}, got ${JSON.stringify(s[key])}`);
  // Lifecycle prefixes are plain string prefixes: one inside the other would move dead letters to
  // Glacier (out of reach of a redrive) or expire archives with the dead letters.
  if (s.deadLetterPrefix.startsWith(s.archivePrefix) || s.archivePrefix.startsWith(s.deadLetterPrefix))
    problems.push(
      `option 'deadLetterPrefix' (${JSON.stringify(s.deadLetterPrefix)}) and 'archivePrefix' (${JSON.stringify(s.archivePrefix)}) must not contain each other: their lifecycle rules would apply to both`,
    );
  if (s.deepArchiveAfterDays <= s.glacierAfterDays)
    problems.push(
      "option 'deepArchiveAfterDays' must be after 'glacierAfterDays' (S3 refuses transitions out of order)",
    );
  if (s.noncurrentExpireAfterDays <= s.glacierAfterDays)
    problems.push(
      "option 'noncurrentExpireAfterDays' must be after 'glacierAfterDays' (the noncurrent GLACIER transition)",
    );
  if (s.deadLetterAfterAgeSeconds >= s.maxRecordAgeSeconds)
    problems.push(
      "option 'deadLetterAfterAge' must be below the mapping's 'maxRecordAge': a failing record is dead-lettered with its content before Lambda gives up on it and keeps only its position",
    );
  if (s.compaction !== undefined) {
    const { closedAfterSeconds, lookbackHours } = s.compaction;
    // An hour is compacted until 1 + closedAfter + lookback hours after its start; S3 runs
    // lifecycle rules once a day, hence a day of margin before GLACIER.
    const lastHours = 1 + closedAfterSeconds / 3600 + lookbackHours;
    if (lastHours + 24 > s.glacierAfterDays * 24)
      problems.push(
        `option 'compaction': closedAfter + lookbackHours reach ${Math.ceil(lastHours)} hours after an hour starts, within a day of 'glacierAfterDays' (${s.glacierAfterDays}): compaction would meet objects already in GLACIER`,
      );
    if (s.storageClass === 'GLACIER' || s.storageClass === 'DEEP_ARCHIVE')
      problems.push(
        `option 'storageClass' ${s.storageClass}: compaction cannot read objects that need a restore; write STANDARD and let the lifecycle move them`,
      );
    if (closedAfterSeconds < s.maxRecordAgeSeconds)
      problems.push(
        "option 'compaction': closedAfter is below the mapping's 'maxRecordAge': Lambda may still redeliver into an hour compaction counts as closed",
      );
  }
  return problems;
}
