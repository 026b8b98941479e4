import { recordLabel, TidewaterError } from '../core/errors.js';

/**
 * A windowed handler's state grew past Lambda's 1 MB per shard. Lambda would end the window
 * early on it; the handler fails the batch instead, so the state is never silently cut short:
 * keep aggregates in the state (counts, sums), not the records themselves.
 */
export class WindowStateTooLargeError extends TidewaterError {
  override name = 'WindowStateTooLargeError';
  readonly bytes: number;
  readonly limitBytes: number;
  readonly windowStart: string;
  readonly shardId: string;
  /** The first record of the batch whose fold made the state too large. */
  readonly eventID: string | undefined;
  readonly sequenceNumber: string | undefined;
  constructor(
    details: { bytes: number; limitBytes: number; windowStart: string; shardId: string },
    record: { eventID?: string | undefined; sequenceNumber?: string | undefined },
  ) {
    super(
      `the window state is ${details.bytes} bytes of JSON after the batch from ${recordLabel(record)} ` +
        `(window ${details.windowStart}, ${details.shardId}); Lambda keeps at most ${details.limitBytes} per shard. ` +
        'Keep aggregates (counts, sums) in the state, not records',
    );
    this.bytes = details.bytes;
    this.limitBytes = details.limitBytes;
    this.windowStart = details.windowStart;
    this.shardId = details.shardId;
    this.eventID = record.eventID;
    this.sequenceNumber = record.sequenceNumber;
  }
}

/** A windowed handler was invoked without a window: the event source mapping has no tumbling window. */
export class NotAWindowEventError extends TidewaterError {
  override name = 'NotAWindowEventError';
  constructor(detail: string) {
    super(
      `${detail}: a windowed handler needs tumblingWindowInSeconds (1-900) on its stream event, ` +
        'so Lambda sends window, state and isFinalInvokeForWindow',
    );
  }
}
