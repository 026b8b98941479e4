import { TidewaterError } from '../../core/index.js';

/** A checkpoint file belongs to another stream, or cannot be read. */
export class CheckpointError extends TidewaterError {
  override name = 'CheckpointError';
  constructor(
    readonly file: string,
    detail: string,
  ) {
    super(`checkpoint ${file}: ${detail}`);
  }
}

/** A replay / capture file line that is neither a Lambda event nor a GetRecords record. */
export class ReplayFileError extends TidewaterError {
  override name = 'ReplayFileError';
  constructor(
    readonly file: string,
    readonly line: number,
    detail: string,
    readonly sequenceNumber?: string,
  ) {
    super(`${file}:${line}: ${detail}`);
  }
}

/**
 * A record no DynamoDB stream can carry reached the emulator (from a replay file or a hand-built
 * event): a sequence number that is not digits, which the emulator orders by as Lambda does, or a
 * record too deep to serialize into an invocation payload. Lambda never sees either; test such
 * poison against the handler itself, where the pipeline dead-letters it.
 */
export class UnstreamableRecordError extends TidewaterError {
  override name = 'UnstreamableRecordError';
  constructor(
    readonly eventID: string | undefined,
    readonly sequenceNumber: string | undefined,
    detail: string,
    options?: { cause?: unknown },
  ) {
    super(`record eventID=${eventID ?? '?'} sequenceNumber=${sequenceNumber ?? '?'}: ${detail}`, options);
  }
}

/** The handler timed out (the emulator's view of Lambda's `Task timed out`). */
export class HandlerTimeoutError extends TidewaterError {
  override name = 'HandlerTimeoutError';
  constructor(
    readonly timeoutMs: number,
    readonly firstSequenceNumber: string,
  ) {
    super(
      `Task timed out after ${(timeoutMs / 1000).toFixed(2)} seconds (batch starting at ${firstSequenceNumber})`,
    );
  }
}

/** The emulator was stopped while a batch was still being retried. */
export class EmulatorStoppedError extends TidewaterError {
  override name = 'EmulatorStoppedError';
  constructor(readonly sequenceNumber: string | undefined) {
    super(`the emulator was stopped with records not yet processed (from ${sequenceNumber ?? 'none'})`);
  }
}

/** A handler module could not be found or loaded, or lacks the named export. */
export class HandlerLoadError extends TidewaterError {
  override name = 'HandlerLoadError';
  constructor(
    readonly handler: string,
    detail: string,
  ) {
    super(`handler ${handler}: ${detail}`);
  }
}

/** What `ReplayStalledError` reports about the batch that made no progress. */
export interface StalledBatch {
  shardId: string;
  /** Sequence numbers of the batch still failing, in shard order. */
  sequenceNumbers: string[];
  /** Their eventIDs, in the same order. */
  eventIds: string[];
  /** Failed invocations in a row with nothing settled in between (bisected halves included). */
  attempts: number;
  /** The last failed invocation's error (for a partial batch response: which record it reported). */
  lastError: string;
  /** The shard's checkpoint when the run ended; undefined when nothing was settled yet. */
  checkpoint: string | undefined;
  /**
   * The batch's maximumRecordAgeInSeconds, when one is set: it never discarded the records because
   * the emulator's clock did not move between the attempts.
   */
  maximumRecordAgeInSeconds?: number;
  /**
   * Set when the invocation that kept failing is a tumbling window's final one (the window's
   * start): Lambda retries it until it succeeds whatever maximumRetryAttempts says.
   */
  finalInvokeOfWindow?: string;
}

/** Records listed in the message: enough to find the batch, few enough to read. */
const LISTED_RECORDS = 5;
/** The last error is quoted up to this length in the message (the `lastError` field keeps it whole). */
const QUOTED_ERROR_CHARS = 500;

/**
 * Under unbounded retries (maximumRetryAttempts -1, Lambda's default) a batch failed again and
 * again with no record checkpointed or discarded in between. Lambda would retry it until its
 * records expire; locally that is a run that never ends, so the emulator ends it with this error
 * (its `stallAfterAttempts` option says after how many attempts).
 */
export class ReplayStalledError extends TidewaterError {
  override name = 'ReplayStalledError';
  readonly shardId: string;
  /** The first record of the stuck batch: where a restart from the checkpoint resumes. */
  readonly sequenceNumber: string | undefined;
  readonly sequenceNumbers: string[];
  readonly eventIds: string[];
  readonly attempts: number;
  readonly lastError: string;
  readonly checkpoint: string | undefined;

  constructor(batch: StalledBatch) {
    super(stalledMessage(batch));
    this.shardId = batch.shardId;
    this.sequenceNumber = batch.sequenceNumbers[0];
    this.sequenceNumbers = batch.sequenceNumbers;
    this.eventIds = batch.eventIds;
    this.attempts = batch.attempts;
    this.lastError = batch.lastError;
    this.checkpoint = batch.checkpoint;
  }
}

function stalledMessage(batch: StalledBatch): string {
  if (batch.finalInvokeOfWindow !== undefined) {
    return (
      `${batch.shardId}: the final invocation of the tumbling window from ${batch.finalInvokeOfWindow} failed ` +
      `${batch.attempts} times in a row (checkpoint ${batch.checkpoint ?? 'none'}; the window holds ` +
      `${batch.sequenceNumbers.length} records). Last error: ${quoted(batch.lastError)}. Lambda suspends the ` +
      'shard until a final invocation succeeds, whatever maximumRetryAttempts says; fix the handler, or raise ' +
      "the emulator's stallAfterAttempts (Infinity retries without end)."
    );
  }
  const count = batch.sequenceNumbers.length;
  const listed = batch.sequenceNumbers
    .slice(0, LISTED_RECORDS)
    .map((seq, i) => `${seq} (eventID ${batch.eventIds[i] ?? '?'})`);
  const rest = count - listed.length;
  const records =
    listed.join(', ') + (rest > 0 ? `, … ${rest} more up to ${batch.sequenceNumbers[count - 1]}` : '');
  const error = quoted(batch.lastError);
  const age =
    batch.maximumRecordAgeInSeconds === undefined
      ? ''
      : ` maximumRecordAgeInSeconds (${batch.maximumRecordAgeInSeconds}) never discarded them: the emulator's ` +
        "clock did not move between the attempts (a replay's clock is the data's); retryDelayMs moves it.";
  // An age limit already set cannot be the fix: the clock is what kept it from working.
  const bound =
    batch.maximumRecordAgeInSeconds === undefined
      ? 'maximumRetryAttempts or maximumRecordAgeInSeconds (serverless.yml: maximumRetryAttempts / ' +
        'maximumRecordAgeInSeconds on the stream event)'
      : 'maximumRetryAttempts (serverless.yml: maximumRetryAttempts on the stream event)';
  return (
    `${batch.shardId}: ${batch.attempts} invocations in a row failed with no record checkpointed or discarded ` +
    `(checkpoint ${batch.checkpoint ?? 'none'}). Stuck batch of ${count} record${count === 1 ? '' : 's'}: ` +
    `${records}. Last error: ${error}. maximumRetryAttempts is unbounded (-1, Lambda's default), so Lambda ` +
    `would retry until the records expire.${age} Bound it with ${bound}, or raise the emulator's ` +
    'stallAfterAttempts (Infinity retries without end).'
  );
}

function quoted(error: string): string {
  return error.length > QUOTED_ERROR_CHARS ? `${error.slice(0, QUOTED_ERROR_CHARS)}…` : error;
}

/** The local Kinesis streaming destination could not put a table's changes into its Kinesis stream. */
export class KinesisBridgeError extends TidewaterError {
  override name = 'KinesisBridgeError';
  constructor(
    readonly streamName: string,
    detail: string,
  ) {
    super(`Kinesis stream ${streamName}: ${detail}`);
  }
}
