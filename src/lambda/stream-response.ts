import { describe } from '../core/index.js';

/**
 * Lambda's reading of what a stream handler returned (Lambda developer guide, "Configuring partial
 * batch response with DynamoDB and Lambda" and "Using tumbling windows with DynamoDB"): success,
 * a partial failure from the lowest reported record, or a response that fails the invocation.
 */
export type Verdict =
  | { outcome: 'success'; state?: Record<string, unknown> }
  | { outcome: 'partial-failure'; index: number; state?: Record<string, unknown> }
  | { outcome: 'invalid-response'; error: string };

export interface ResponseRules {
  /** FunctionResponseTypes holds ReportBatchItemFailures: without it the return value is ignored. */
  reportBatchItemFailures: boolean;
  /** The mapping has a tumbling window: the response must carry the window's state. */
  windowed: boolean;
}

/**
 * @param indexOf the index in the batch of a sequence number, -1 when it is not one of the batch's.
 */
export function judgeResponse(
  value: unknown,
  indexOf: (id: string) => number,
  rules: ResponseRules,
): Verdict {
  let state: Record<string, unknown> | undefined;
  if (rules.windowed) {
    const read = stateOfResponse(value);
    if ('error' in read) return invalid(read.error);
    state = read.state;
  }
  const success: Verdict = state === undefined ? { outcome: 'success' } : { outcome: 'success', state };
  // "Lambda treats a batch as a complete success if you return … a null EventResponse."
  if (!rules.reportBatchItemFailures || value === null || value === undefined) return success;
  // Anything but an object is not a StreamsEventResponse at all: a string is not "an empty
  // EventResponse", so it cannot count as one (the guide lists no such success condition).
  if (typeof value !== 'object' || Array.isArray(value))
    return invalid(
      `the response is ${shown(value)}, not a partial batch response ({ batchItemFailures: [...] })`,
    );
  const failures = (value as { batchItemFailures?: unknown }).batchItemFailures;
  if (failures === undefined || failures === null) return success;
  if (!Array.isArray(failures)) return invalid(`batchItemFailures is ${shown(failures)}, not an array`);
  if (failures.length === 0) return success;
  let lowest = -1;
  for (const failure of failures) {
    if (failure === null || typeof failure !== 'object' || Array.isArray(failure))
      return invalid(`a batchItemFailures entry is ${shown(failure)}, not an object`);
    // "An itemIdentifier with a bad key name" is a complete failure.
    if (!('itemIdentifier' in failure))
      return invalid(
        `a batchItemFailures entry has no itemIdentifier (its keys: ${Object.keys(failure).join(', ') || 'none'})`,
      );
    const id = (failure as { itemIdentifier: unknown }).itemIdentifier;
    // "An empty string itemIdentifier" and "a null itemIdentifier" are complete failures.
    if (id === null || id === undefined || id === '') return invalid(`itemIdentifier ${shown(id)} is empty`);
    if (typeof id !== 'string')
      return invalid(
        `itemIdentifier ${shown(id)} is not a string: it must be the record's SequenceNumber text`,
      );
    const index = indexOf(id);
    if (index < 0)
      return invalid(`itemIdentifier ${JSON.stringify(id)} is not a sequence number in the batch`);
    // "Lambda uses the record with the lowest sequence number as the checkpoint."
    if (lowest < 0 || index < lowest) lowest = index;
  }
  return state === undefined
    ? { outcome: 'partial-failure', index: lowest }
    : { outcome: 'partial-failure', index: lowest, state };
}

/**
 * "When using tumbling windows, your Lambda function response must contain a state property. If
 * the response does not contain a state property, Lambda considers this a failed invocation." The
 * event hands the state over as an object (a Map<String, String> for Java, the guide recommends),
 * so a state that is not an object is refused as well.
 */
function stateOfResponse(value: unknown): { state: Record<string, unknown> } | { error: string } {
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    return {
      error: `the response is ${shown(value)}, not an object with a state property (tumbling window)`,
    };
  if (!('state' in value)) return { error: 'the response has no state property (tumbling window)' };
  const state = (value as { state: unknown }).state;
  if (state === null || typeof state !== 'object' || Array.isArray(state))
    return { error: `the response's state is ${shown(state)}, not an object (tumbling window)` };
  // Lambda keeps the state as JSON between invocations: what survives that is what comes back.
  return { state: JSON.parse(JSON.stringify(state)) as Record<string, unknown> };
}

function invalid(error: string): Verdict {
  return { outcome: 'invalid-response', error };
}

function shown(value: unknown): string {
  return value === undefined ? 'undefined' : describe(value);
}
