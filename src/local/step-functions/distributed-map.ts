import { randomUUID } from 'node:crypto';
import { GetObjectCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import type { Context } from 'aws-lambda';
import pLimit from 'p-limit';
import { defineOptions } from '../../core/options.js';
import { createLambdaContext } from '../../lambda/context.js';
import { callHandler } from '../emulator/handler-call.js';
import { loadHandler, resolveHandlerModule } from '../emulator/handler-loader.js';
import { fill, type MapPlan, planDistributedMap, readDefinition, substitute } from './definition.js';
import { MapRunError, UnsupportedDefinitionError } from './errors.js';

/** A child's function: called as Lambda would call it, or loaded from `<module>.<export>` like `tidewater start`. */
export type LocalMapFunction =
  | ((event: never, context: Context) => unknown)
  | { readonly handler: string; readonly root: string; readonly timeoutSeconds?: number };

/** Options of runDistributedMap: the definition, its substitutions, input, S3 client and the children's functions. */
export interface LocalMapOptions {
  /** The definition: a .json file (path or file: URL) or the parsed object. */
  definition: string | URL | object;
  /** The values of its `${Name}` placeholders (CloudFormation's DefinitionSubstitutions). */
  substitutions?: Readonly<Record<string, string>>;
  /** The execution's input. */
  input: unknown;
  /** A client for the local S3 server: the ItemReader reads and the ResultWriter writes through it. */
  s3: S3Client;
  /** The functions the child Task's Resource names, by ARN (after substitution). */
  functions: Readonly<Record<string, LocalMapFunction>>;
  /** Replaces the definition's MaxConcurrency. */
  maxConcurrency?: number;
  /** Named in the ARNs written to the results. Default `local`. */
  stateMachineName?: string;
}

/** What a local Distributed Map run (runDistributedMap) did: its status and children. */
export interface LocalMapResult {
  /** FAILED when the failures exceed ToleratedFailurePercentage or ToleratedFailureCount. */
  readonly status: 'SUCCEEDED' | 'FAILED';
  /** `States.ExceedToleratedFailureThreshold` when FAILED. */
  readonly error?: string;
  readonly mapRunArn: string;
  /** The Map state's output: the Map Run's ARN and, with a ResultWriter, where its manifest.json is. */
  readonly output: { MapRunArn: string; ResultWriterDetails?: { Bucket: string; Key: string } };
  /** Items read; a batch's items count as its child did. */
  readonly items: { readonly succeeded: number; readonly failed: number; readonly pending: number };
  readonly children: readonly ChildResult[];
}

/** One child execution of a local Distributed Map run. */
export interface ChildResult {
  readonly name: string;
  readonly executionArn: string;
  readonly status: 'SUCCEEDED' | 'FAILED' | 'PENDING';
  readonly input: unknown;
  /** How many items of the reader this child's input holds (1 without an ItemBatcher). */
  readonly itemCount: number;
  readonly output?: unknown;
  readonly error?: string;
  readonly cause?: string;
  readonly startDate?: string;
  readonly stopDate?: string;
}

const readOptions = /* @__PURE__ */ defineOptions<LocalMapOptions>()('runDistributedMap', {
  definition: {
    kind: 'custom',
    expected: 'a definition file path, file: URL or parsed definition',
    check: (v) => typeof v === 'string' || (typeof v === 'object' && v !== null),
    required: true,
  },
  substitutions: { kind: 'object' },
  input: { kind: 'custom', expected: 'the execution input', check: () => true },
  s3: { kind: 'client', required: true },
  functions: { kind: 'object', required: true },
  maxConcurrency: { kind: 'integer', min: 0 },
  stateMachineName: { kind: 'nonEmptyString', default: 'local' },
});

// Lambda's default timeout, for a function given as a plain function.
const DEFAULT_TIMEOUT_SECONDS = 3;
const ACCOUNT = '000000000000';
const REGION = 'us-east-1';

async function readItems(plan: MapPlan, input: unknown, s3: S3Client): Promise<unknown[]> {
  const scope = { input, context: {} };
  const take = (template: unknown, field: string): string => {
    const { v } = fill({ v: template }, scope, plan.state, field) as { v: unknown };
    // A path field was planned as { 'v.$': path }: one more level to unwrap.
    const value = typeof v === 'object' && v !== null ? (v as { v?: unknown }).v : v;
    if (typeof value !== 'string' || value === '')
      throw new MapRunError(plan.state, 'States.Runtime', `${field} is not a string`);
    return value;
  };
  const bucket = take(plan.reader.bucket, 'ItemReader.Parameters.Bucket');
  const key = take(plan.reader.key, 'ItemReader.Parameters.Key');
  let text: string;
  try {
    const object = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
    text = await object.Body!.transformToString('utf8');
  } catch (error) {
    throw new MapRunError(
      plan.state,
      'States.ItemReaderFailed',
      `cannot read s3://${bucket}/${key}: ${(error as Error).name}`,
    );
  }
  let items: unknown[];
  try {
    if (plan.reader.inputType === 'JSON') {
      const parsed: unknown = JSON.parse(text);
      if (!Array.isArray(parsed)) throw new Error('not a JSON array');
      items = parsed;
    } else
      items = text
        .split('\n')
        .filter((line) => line.trim() !== '')
        .map((line) => JSON.parse(line) as unknown);
  } catch (error) {
    throw new MapRunError(
      plan.state,
      'States.ItemReaderFailed',
      `s3://${bucket}/${key} is not ${plan.reader.inputType}: ${(error as Error).message}`,
    );
  }
  return plan.reader.maxItems === undefined || plan.reader.maxItems === 0
    ? items
    : items.slice(0, plan.reader.maxItems);
}

/** The children's inputs: each item through ItemSelector, then grouped by ItemBatcher. */
function childInputs(
  plan: MapPlan,
  input: unknown,
  items: readonly unknown[],
): { input: unknown; itemCount: number }[] {
  const selected = items.map((value, index) =>
    plan.itemSelector === undefined
      ? value
      : fill(
          plan.itemSelector,
          { input, context: { Map: { Item: { Index: index, Value: value } } } },
          plan.state,
          'ItemSelector',
        ),
  );
  if (plan.batcher === undefined) return selected.map((item) => ({ input: item, itemCount: 1 }));
  const { maxItems, maxBytes, batchInput } = plan.batcher;
  const shared =
    batchInput === undefined
      ? undefined
      : fill(batchInput, { input, context: {} }, plan.state, 'ItemBatcher.BatchInput');
  const batches: { input: unknown; itemCount: number }[] = [];
  let current: unknown[] = [];
  let bytes = 0;
  const close = () => {
    if (current.length === 0) return;
    batches.push({
      input: { Items: current, ...(shared === undefined ? {} : { BatchInput: shared }) },
      itemCount: current.length,
    });
    current = [];
    bytes = 0;
  };
  for (const item of selected) {
    const size = Buffer.byteLength(JSON.stringify(item));
    if (size > maxBytes)
      throw new MapRunError(
        plan.state,
        'States.ItemReaderFailed',
        `an item of ${size} bytes exceeds MaxInputBytesPerBatch ${maxBytes}`,
      );
    if (current.length >= maxItems || bytes + size > maxBytes) close();
    current.push(item);
    bytes += size;
  }
  close();
  return batches;
}

async function functionOf(
  fn: LocalMapFunction,
): Promise<{ call: (event: never, context: Context) => unknown; timeoutSeconds: number }> {
  if (typeof fn === 'function') return { call: fn, timeoutSeconds: DEFAULT_TIMEOUT_SECONDS };
  const at = fn.handler.lastIndexOf('.');
  const file = resolveHandlerModule(fn.handler.slice(0, at), fn.root);
  const call = await loadHandler<(event: never, context: Context) => unknown>(
    file,
    fn.handler.slice(at + 1),
    { root: fn.root },
  );
  return { call, timeoutSeconds: fn.timeoutSeconds ?? DEFAULT_TIMEOUT_SECONDS };
}

/** Lambda's error shape for a function error, as the Task reports it: Error is its type, Cause its JSON. */
function lambdaError(text: string): { error: string; cause: string } {
  const colon = text.indexOf(': ');
  const errorType = colon > 0 ? text.slice(0, colon) : 'Error';
  const errorMessage = colon > 0 ? text.slice(colon + 2) : text;
  return { error: errorType, cause: JSON.stringify({ errorType, errorMessage }) };
}

/**
 * Runs a Distributed Map definition against the local servers: the ItemReader's file from the local
 * S3 server, each child's Task on a local function (at most MaxConcurrency at once), the failure
 * tolerance applied as children finish (no child starts once it is exceeded; those left are
 * PENDING), and the ResultWriter's files written to the local S3 server in Step Functions' layout.
 */
export async function runDistributedMap(options: LocalMapOptions): Promise<LocalMapResult> {
  const o = readOptions(options);
  const plan = planDistributedMap(substitute(readDefinition(o.definition), o.substitutions ?? {}));
  const fn = o.functions[plan.task.resource];
  if (fn === undefined)
    throw new UnsupportedDefinitionError(
      plan.task.state,
      'Resource',
      `no local function given for ${plan.task.resource}`,
    );
  const { call, timeoutSeconds } = await functionOf(fn);
  const timeoutMs = 1000 * Math.min(timeoutSeconds, plan.task.timeoutSeconds ?? Number.POSITIVE_INFINITY);
  const items = await readItems(plan, o.input, o.s3);
  const inputs = childInputs(plan, o.input, items);

  const runId = randomUUID();
  const stateMachineArn = `arn:aws:states:${REGION}:${ACCOUNT}:stateMachine:${o.stateMachineName}`;
  const mapRunArn = `arn:aws:states:${REGION}:${ACCOUNT}:mapRun:${o.stateMachineName}/${plan.state}:${runId}`;
  const functionName = plan.task.resource.split(':').pop() ?? 'function';
  const total = items.length;
  let failedItems = 0;
  const overThreshold = () => exceedsTolerance(plan, failedItems, total);

  const concurrency = o.maxConcurrency ?? plan.maxConcurrency;
  const limit = pLimit(concurrency === 0 ? Math.max(1, inputs.length) : concurrency);
  const children = await Promise.all(
    inputs.map(({ input, itemCount }, index) =>
      limit(async (): Promise<ChildResult> => {
        const name = `${runId.slice(0, 8)}-${index}`;
        const executionArn = `arn:aws:states:${REGION}:${ACCOUNT}:execution:${o.stateMachineName}/${plan.state}:${name}`;
        if (overThreshold()) return { name, executionArn, status: 'PENDING', input, itemCount };
        const startDate = new Date().toISOString();
        const context = createLambdaContext({
          functionName,
          functionArn: plan.task.resource,
          memoryLimitInMB: 1024,
          timeoutMs,
        });
        const outcome = await callHandler(call, input, context, {
          timeoutMs,
          timedOutSettleMs: 1000,
          firstSequenceNumber: name,
        });
        const stopDate = new Date().toISOString();
        if ('value' in outcome)
          return {
            name,
            executionArn,
            status: 'SUCCEEDED',
            input,
            itemCount,
            output: outcome.value,
            startDate,
            stopDate,
          };
        failedItems += itemCount;
        const { error, cause } =
          outcome.outcome === 'timeout'
            ? { error: 'Sandbox.Timedout', cause: JSON.stringify({ errorMessage: outcome.error }) }
            : lambdaError(outcome.error);
        return { name, executionArn, status: 'FAILED', input, itemCount, error, cause, startDate, stopDate };
      }),
    ),
  );
  const count = (status: ChildResult['status']) =>
    children.filter((c) => c.status === status).reduce((sum, c) => sum + c.itemCount, 0);
  const failed = overThreshold();
  const output: LocalMapResult['output'] = { MapRunArn: mapRunArn };
  if (plan.writer !== undefined)
    output.ResultWriterDetails = await writeResults(
      o.s3,
      plan.writer,
      runId,
      mapRunArn,
      stateMachineArn,
      children,
    );
  return {
    status: failed ? 'FAILED' : 'SUCCEEDED',
    ...(failed ? { error: 'States.ExceedToleratedFailureThreshold' } : {}),
    mapRunArn,
    output,
    items: { succeeded: count('SUCCEEDED'), failed: count('FAILED'), pending: count('PENDING') },
    children,
  };
}

/**
 * Whether the failed items exceed the definition's tolerance: ToleratedFailurePercentage of all items
 * read, or ToleratedFailureCount items, whichever it sets (either exceeded fails the run); with
 * neither, any failure does. Exceeding, not reaching: 10% of 10 items tolerates 1 failure.
 */
export function exceedsTolerance(
  plan: Pick<MapPlan, 'toleratedPercentage' | 'toleratedCount'>,
  failedItems: number,
  totalItems: number,
): boolean {
  const { toleratedPercentage: percentage, toleratedCount: count } = plan;
  if (percentage === undefined && count === undefined) return failedItems > 0;
  return (
    (count !== undefined && failedItems > count) ||
    (percentage !== undefined && totalItems > 0 && 100 * failedItems > percentage * totalItems)
  );
}

/** `<Prefix>/<map run id>/`: Step Functions' folder for one Map Run's results. */
export function resultsFolder(prefix: string, runId: string): string {
  const trimmed = prefix.replace(/\/+$/, '');
  return trimmed === '' ? `${runId}/` : `${trimmed}/${runId}/`;
}

/**
 * The ResultWriter's files: SUCCEEDED_0.json, FAILED_0.json and PENDING_0.json (each a JSON array of
 * child executions, written only when it has any) and manifest.json naming them with their sizes.
 */
async function writeResults(
  s3: S3Client,
  writer: NonNullable<MapPlan['writer']>,
  runId: string,
  mapRunArn: string,
  stateMachineArn: string,
  children: readonly ChildResult[],
): Promise<{ Bucket: string; Key: string }> {
  const folder = resultsFolder(writer.prefix, runId);
  const files: Record<'FAILED' | 'PENDING' | 'SUCCEEDED', { Key: string; Size: number }[]> = {
    FAILED: [],
    PENDING: [],
    SUCCEEDED: [],
  };
  for (const status of ['SUCCEEDED', 'FAILED', 'PENDING'] as const) {
    const own = children.filter((c) => c.status === status);
    if (own.length === 0) continue;
    const body = JSON.stringify(
      own.map((c) => ({
        ExecutionArn: c.executionArn,
        Input: JSON.stringify(c.input),
        InputDetails: { Included: true },
        Name: c.name,
        ...(status === 'SUCCEEDED'
          ? { Output: JSON.stringify(c.output ?? null), OutputDetails: { Included: true } }
          : {}),
        ...(status === 'FAILED' ? { Error: c.error, Cause: c.cause } : {}),
        ...(c.startDate === undefined ? {} : { StartDate: c.startDate, StopDate: c.stopDate }),
        StateMachineArn: stateMachineArn,
        Status: status,
      })),
    );
    const key = `${folder}${status}_0.json`;
    await s3.send(
      new PutObjectCommand({ Bucket: writer.bucket, Key: key, Body: body, ContentType: 'application/json' }),
    );
    files[status].push({ Key: key, Size: Buffer.byteLength(body) });
  }
  const manifestKey = `${folder}manifest.json`;
  const manifest = { DestinationBucket: writer.bucket, MapRunArn: mapRunArn, ResultFiles: files };
  await s3.send(
    new PutObjectCommand({
      Bucket: writer.bucket,
      Key: manifestKey,
      Body: JSON.stringify(manifest),
      ContentType: 'application/json',
    }),
  );
  return { Bucket: writer.bucket, Key: manifestKey };
}
