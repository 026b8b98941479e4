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
  };
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
  lines.push(
    `${report.dryRun ? 'dry run: ' : ''}${report.messagesRead} messages read, ${report.recordsRedriven} records redriven, ` +
      `${report.succeeded} succeeded, ${report.failed} failed, ${report.messagesRemoved} messages removed, ` +
      `${report.rangesExpired.length} ranges expired, ${report.errors.length} errors`,
  );
  return lines;
}
