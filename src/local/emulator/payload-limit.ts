import { UnstreamableRecordError } from './errors.js';

/**
 * The synchronous invocation payload limit, 6 MB, which an event source mapping's batch never
 * passes: Lambda invokes when "the payload size reaches 6 MB. You cannot modify this limit"
 * (Lambda developer guide, "Lambda event source mappings", batching behavior), and "Lambda passes
 * all of the records in the batch to the function in a single call, as long as the total size of
 * the events doesn't exceed the payload limit for synchronous invocation (6 MB)" (BatchSize).
 * Counted in bytes of the event's JSON, 6 MiB as Lambda's quotas page counts MB.
 */
export const INVOCATION_PAYLOAD_LIMIT_BYTES = 6 * 1024 * 1024;

/** `{"Records":[]}`: what an event weighs before its first record. */
export const EVENT_ENVELOPE_BYTES = Buffer.byteLength('{"Records":[]}');

/** What one record adds to an event's JSON: its own bytes and the comma before it. */
export function recordPayloadBytes(
  record: unknown,
  identity: { eventId: string | undefined; sequenceNumber: string | undefined } = {
    eventId: undefined,
    sequenceNumber: undefined,
  },
): number {
  let json: string;
  try {
    json = JSON.stringify(record);
  } catch (error) {
    // Only a record nested thousands of levels deep (DynamoDB stops at 32) overflows the stack here.
    throw new UnstreamableRecordError(
      identity.eventId,
      identity.sequenceNumber,
      `cannot be serialized into an invocation payload (${error instanceof Error ? error.message : String(error)})`,
      { cause: error },
    );
  }
  return Buffer.byteLength(json, 'utf8') + 1;
}
