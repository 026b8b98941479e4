import type { RedriveInvokeError, RedriveMessageError, StreamRangeExpiredError } from './errors.js';

/** One message or object redriven (or, in a dry run, that would be). */
export interface RedriveItem {
  /** `sqs:<message id>` or `s3://<bucket>/<key>`. */
  source: string;
  kind: 'on-failure' | 'dead-letter';
  /** For on-failure records: the shard and range read back. */
  shardId?: string;
  startSequenceNumber?: string;
  endSequenceNumber?: string;
  records: number;
}

/** A message whose records did not all succeed: it stays where it was. */
export interface RedriveFailure {
  source: string;
  /** From the first record not done to the end of the batch, as Lambda would retry them. */
  sequenceNumbers: string[];
  error: string | undefined;
}

/** Why a message read in the run was left where it is. */
export type KeptReason =
  /** Some of its records failed (`failures` names them), or the function could not be invoked. */
  | 'failed'
  /** Its records "succeeded" only by being dead-lettered into the queue or bucket being redriven. */
  | 'dead-lettered-again'
  /** It could not be used: refused (another stream, a pointer outside its bucket), malformed, unreadable. */
  | 'refused'
  /** The stream no longer holds its range (`rangesExpired` says how to recover). */
  | 'expired';

/** A message the run left where it was, and why. */
export interface RedriveKept {
  source: string;
  reason: KeptReason;
  detail: string;
}

/** Why a run ended before it had read every message. */
export type StopReason = 'max-messages' | 'max-seconds' | 'dead-lettered-again';

/** Counts so far, after each message. */
export interface RedriveProgress {
  messagesRead: number;
  recordsRedriven: number;
  succeeded: number;
  failed: number;
  kept: number;
  elapsedSeconds: number;
}

/** What redrive did: messages read, batches rerun, records delivered and failed. */
export interface RedriveReport {
  dryRun: boolean;
  /** Messages and objects read (all sources). */
  messagesRead: number;
  /** Records run through the function (in a dry run: that would have been). */
  recordsRedriven: number;
  succeeded: number;
  failed: number;
  /** Messages deleted from the queue and objects deleted from the bucket, each after all its records succeeded. */
  messagesRemoved: number;
  items: RedriveItem[];
  failures: RedriveFailure[];
  /** Ranges the stream no longer holds; each error says how to recover the items. */
  rangesExpired: StreamRangeExpiredError[];
  /** Messages that could not be read (other stream, malformed, unknown version) or whose function call failed. */
  errors: (RedriveMessageError | RedriveInvokeError)[];
  /** Every message read and left in place, with why (dry runs keep everything and list nothing here). */
  kept: RedriveKept[];
  /** Set when the run ended early: a bound was reached, or a record came back dead-lettered. */
  stopped: StopReason | undefined;
}

export function emptyReport(dryRun: boolean): RedriveReport {
  return {
    dryRun,
    messagesRead: 0,
    recordsRedriven: 0,
    succeeded: 0,
    failed: 0,
    messagesRemoved: 0,
    items: [],
    failures: [],
    rangesExpired: [],
    errors: [],
    kept: [],
    stopped: undefined,
  };
}

const STOPPED: Record<StopReason, string> = {
  'max-messages': 'the run read as many messages as it may (max messages); run again for the rest',
  'max-seconds': 'the run took as long as it may (max seconds); run again for the rest',
  'dead-lettered-again':
    "a redriven record came back into what is being redriven (the function's dead-letter sink writes there): fix the cause, then run again",
};

/** One line of counts, as the CLI prints it after each message. */
export function formatProgress(progress: RedriveProgress): string {
  return (
    `redrive: ${progress.messagesRead} messages read, ${progress.recordsRedriven} records, ${progress.succeeded} succeeded, ` +
    `${progress.failed} failed, ${progress.kept} kept, ${Math.round(progress.elapsedSeconds)} s`
  );
}

/** The report as the CLI prints it: one line of counts, then one line per problem. */
export function formatReport(report: RedriveReport): string[] {
  const lines = report.items.map(
    (item) =>
      `${report.dryRun ? 'would redrive' : 'redrove'} ${item.source}: ${item.kind}, ${item.records} records` +
      (item.shardId ? ` (shard ${item.shardId} ${item.startSequenceNumber}..${item.endSequenceNumber})` : ''),
  );
  for (const f of report.failures)
    lines.push(
      `kept ${f.source}: failed sequence numbers ${f.sequenceNumbers.join(', ')}${f.error ? ` (${f.error})` : ''}`,
    );
  for (const e of report.rangesExpired) lines.push(`expired: ${e.message}`);
  for (const e of report.errors) lines.push(`error: ${e.name}: ${e.message}`);
  for (const k of report.kept) lines.push(`kept ${k.source} (${k.reason}): ${k.detail}`);
  if (report.stopped !== undefined) lines.push(`stopped early: ${STOPPED[report.stopped]}`);
  lines.push(
    `${report.dryRun ? 'dry run: ' : ''}${report.messagesRead} messages read, ${report.recordsRedriven} records redriven, ` +
      `${report.succeeded} succeeded, ${report.failed} failed, ${report.messagesRemoved} messages removed, ` +
      `${report.rangesExpired.length} ranges expired, ${report.errors.length} errors, ${report.kept.length} kept`,
  );
  return lines;
}
