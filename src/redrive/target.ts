import { InvokeCommand, type InvokeCommandOutput, LambdaClient } from '@aws-sdk/client-lambda';
import type { Context, DynamoDBStreamEvent, KinesisStreamEvent } from 'aws-lambda';
import { describeError } from '../core/errors.js';
import { createLambdaContext } from '../lambda/context.js';
import { judgeResponse } from '../lambda/stream-response.js';
import { RedriveInvokeError } from './errors.js';
import type { RedriveRecord } from './message.js';

/** How one redriven batch ended: the sequence numbers that did not succeed (none: all did). */
export interface BatchOutcome {
  failed: string[];
  /** Why, when something failed: the function's error or the invalid response. */
  error?: string;
}

/** Where redriven records run: a handler in this process, or the deployed function. */
export interface RedriveTarget {
  readonly description: string;
  run(records: readonly RedriveRecord[]): Promise<BatchOutcome>;
}

/** A record's position, as its partial batch response names it: the Kinesis or the DynamoDB sequence number. */
function sequenceNumberOf(record: RedriveRecord): string {
  return 'kinesis' in record ? record.kinesis.sequenceNumber : record.dynamodb.SequenceNumber;
}

function allSequenceNumbers(records: readonly RedriveRecord[]): string[] {
  return records.map(sequenceNumberOf);
}

/**
 * Lambda's reading of a stream response (partial batch response on, as every tidewater function
 * has it): from the lowest reported record on, nothing counts as done.
 */
export function outcomeOf(records: readonly RedriveRecord[], response: unknown): BatchOutcome {
  const sequences = allSequenceNumbers(records);
  const verdict = judgeResponse(response, (id) => sequences.indexOf(id), {
    reportBatchItemFailures: true,
    windowed: false,
  });
  if (verdict.outcome === 'success') return { failed: [] };
  if (verdict.outcome === 'partial-failure')
    return { failed: sequences.slice(verdict.index), error: 'the function reported batch item failures' };
  return { failed: sequences, error: verdict.error };
}

/** The event Lambda would give the function: a DynamoDB stream event or a Kinesis one, as the records are. */
function eventOf(records: readonly RedriveRecord[]): DynamoDBStreamEvent | KinesisStreamEvent {
  return { Records: records as unknown as DynamoDBStreamEvent['Records'] };
}

/** A stream handler as Lambda calls it; typed loosely so any handler of a DynamoDB or Kinesis stream event fits. */
export type StreamHandlerFunction = (event: never, context: Context) => unknown;

/** Runs batches through a handler in this process (as `tidewater replay` loads one). */
export function handlerTarget(
  handler: StreamHandlerFunction,
  options: { functionName?: string; timeoutMs?: number } = {},
): RedriveTarget {
  const functionName = options.functionName ?? 'redrive';
  return {
    description: `handler ${functionName}`,
    async run(records) {
      const context = createLambdaContext({
        functionName,
        functionArn: `arn:aws:lambda:local:000000000000:function:${functionName}`,
        timeoutMs: options.timeoutMs ?? 900_000,
        memoryLimitInMB: 1024,
      });
      try {
        return outcomeOf(records, await handler(eventOf(records) as never, context));
      } catch (error) {
        return { failed: allSequenceNumbers(records), error: describeError(error) };
      }
    },
  };
}

/** Options of lambdaTarget: the deployed function redriven batches are sent to. */
export interface LambdaTargetOptions {
  /** Function name, ARN or qualified ARN (a version or alias). */
  functionName: string;
  /** Default one built from the environment (AWS_ENDPOINT_URL_LAMBDA applies). */
  client?: Pick<LambdaClient, 'send'>;
}

/**
 * Invokes the deployed function synchronously (RequestResponse) with an event of Lambda's shape
 * and reads its partial batch response from the payload; a function error fails the whole batch.
 */
export function lambdaTarget(options: LambdaTargetOptions): RedriveTarget {
  const client = options.client ?? new LambdaClient({});
  return {
    description: `Lambda function ${options.functionName}`,
    async run(records) {
      let response: InvokeCommandOutput;
      try {
        response = await client.send(
          new InvokeCommand({
            FunctionName: options.functionName,
            InvocationType: 'RequestResponse',
            Payload: Buffer.from(JSON.stringify(eventOf(records))),
          }),
        );
      } catch (error) {
        throw new RedriveInvokeError(`invoking ${options.functionName} failed: ${describeError(error)}`, {
          cause: error,
        });
      }
      const text = response.Payload ? Buffer.from(response.Payload).toString('utf8') : '';
      if (response.FunctionError !== undefined)
        return {
          failed: allSequenceNumbers(records),
          error: `function error ${response.FunctionError}`,
        };
      let value: unknown = null;
      try {
        value = text === '' ? null : JSON.parse(text);
      } catch {
        return { failed: allSequenceNumbers(records), error: 'the response is not JSON' };
      }
      return outcomeOf(records, value);
    },
  };
}
