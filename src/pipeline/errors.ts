import { RecordError, recordLabel, TidewaterError } from '../core/errors.js';

/**
 * A record of the batch has no readable sequence number. Lambda only accepts sequence numbers of
 * the batch as `itemIdentifier`, so no partial response can name this record: the invocation
 * fails as a whole and Lambda retries the batch (bisecting it when BisectBatchOnFunctionError is on).
 */
export class UnreadableSequenceNumberError extends TidewaterError {
  override name = 'UnreadableSequenceNumberError';
  readonly index: number;
  readonly eventID: string | undefined;
  readonly sequenceNumber: undefined = undefined;
  constructor(index: number, eventID: string | undefined) {
    super(
      `record #${index} of the batch (eventID=${eventID ?? '?'}) has no readable dynamodb.SequenceNumber; ` +
        'failing the whole batch because a partial response could not name it',
    );
    this.index = index;
    this.eventID = eventID;
  }
}

/** No route and no handler took the record and `onUnrouted` asks for it to fail or be dead-lettered. */
export class UnroutedRecordError extends RecordError {
  override name = 'UnroutedRecordError';
  declare readonly eventID: string;
  declare readonly sequenceNumber: string;
  constructor(record: { eventID: string; sequenceNumber: string; kind: string }) {
    super(`no route matched ${record.kind} record ${recordLabel(record)}`, record);
  }
}

/** A sink reported a failure for a sequence number it was not given: its whole batch is failed. */
export class SinkContractError extends TidewaterError {
  override name = 'SinkContractError';
  readonly sinkName: string;
  readonly sequenceNumber: string;
  constructor(sinkName: string, sequenceNumber: unknown) {
    super(
      `sink ${sinkName} reported a failure for sequenceNumber ${JSON.stringify(sequenceNumber)}, ` +
        'which is not in the batch it was given; treating its whole batch as failed',
    );
    this.sinkName = sinkName;
    this.sequenceNumber = String(sequenceNumber);
  }
}

/** The invocation's deadline margin was reached: work not started is reported as failed so Lambda resumes there. */
export class DeadlineReachedError extends TidewaterError {
  override name = 'DeadlineReachedError';
  readonly sequenceNumber: string | undefined;
  constructor(sequenceNumber: string | undefined, marginMs: number) {
    super(
      `less than ${marginMs} ms of the invocation left; stopping before sequenceNumber ${sequenceNumber ?? '?'} ` +
        'so the batch is checkpointed instead of timing out',
    );
    this.sequenceNumber = sequenceNumber;
  }
}
