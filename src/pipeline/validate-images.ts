import { describeError } from '../core/errors.js';
import { describe } from '../core/options.js';
import type { StreamRecord } from '../records/stream-record.js';
import type { ClassifiedRecord, Item } from '../records/types.js';
import type { ImageIssue } from '../sinks/types.js';
import { type ImageName, ImageSchemaError, InvalidImageError } from './errors.js';
import { giveUp, isPoison, type Ledger, malformed } from './ledger.js';
import type { CompiledConfig, CompiledSchema } from './plan.js';
import type { StandardSchemaV1 } from './standard-schema.js';
import { isThenable } from './thenable.js';

/** A validate call that threw (or whose promise rejected): kept apart from any value it could return. */
class Thrown {
  constructor(readonly error: unknown) {}
}

type Attempt = StandardSchemaV1.Result<unknown> | Thrown | undefined;

/** An image's validation still running (an async schema). */
interface Pending {
  readonly i: number;
  readonly j: number;
  /** The image named if it never settles (NewImage when both were pending). */
  readonly image: ImageName;
  readonly settled: Promise<readonly [Attempt, Attempt]>;
  done: boolean;
}

function attempt(props: StandardSchemaV1.Props<unknown, Item>, image: Item | undefined) {
  if (image === undefined) return undefined;
  try {
    return props.validate(image);
  } catch (error) {
    return new Thrown(error);
  }
}

function settledAttempt(value: unknown): Promise<Attempt> {
  return Promise.resolve(value as Attempt).then(
    (result) => result,
    (error: unknown) => new Thrown(error),
  );
}

/**
 * The validation stage, run only when a route or the kind handlers have an item schema: between
 * routing and delivery, every routed record's images are validated once per schema its routing
 * mask reaches (two sinks behind one schema share one validation), in stream order, up to the
 * cut-off. A record that passes gets a view with the schema's output (ledger.views); one that
 * fails, or whose schema fails on it, loses that schema's sinks (and handler) and is
 * dead-lettered `invalid-image`; its other sinks still get it, as after any per-sink give-up.
 *
 * Synchronous schemas cost no promise. Async ones run concurrently and are awaited together, at
 * most until one deadline margin before the pipeline's deadline: what has not settled by then is
 * dead-lettered (ImageSchemaError 'deadline'), and the margin left lets the records validated be
 * delivered — waiting until the deadline itself would leave the batch no time, and retrying would
 * meet the same hanging schema again. Returns undefined when nothing was left pending.
 */
export function validateImages(ledger: Ledger, config: CompiledConfig): Promise<void> | undefined {
  const { schemas } = config;
  const { masks, records, n } = ledger;
  const views: (ClassifiedRecord | undefined)[][] = [];
  for (let j = 0; j < schemas.length; j++) views.push(new Array<ClassifiedRecord | undefined>(n));
  ledger.views = views;
  let pending: Pending[] | undefined;
  for (let i = 0; i < ledger.cutoff; i++) {
    for (let j = 0; j < schemas.length; j++) {
      const schema = schemas[j]!;
      if ((masks[i]! & schema.mask) === 0) continue;
      const record = records[i]!;
      let newImage: Item | undefined;
      let oldImage: Item | undefined;
      try {
        newImage = record.newImage;
        oldImage = record.oldImage;
      } catch (error) {
        if (!isPoison(ledger, error, i)) throw error;
        malformed(ledger, i, error, `schema:${schema.label}`);
        break;
      }
      const a = attempt(schema.props, newImage);
      const b = attempt(schema.props, oldImage);
      if (!isThenable(a) && !isThenable(b)) settle(ledger, schema, j, i, a, b);
      else {
        const settled = Promise.all([settledAttempt(a), settledAttempt(b)]);
        const entry: Pending = { i, j, image: isThenable(a) ? 'NewImage' : 'OldImage', settled, done: false };
        if (pending === undefined) pending = [entry];
        else pending.push(entry);
      }
    }
  }
  return pending === undefined ? undefined : awaitPending(ledger, config, pending);
}

async function awaitPending(ledger: Ledger, config: CompiledConfig, pending: Pending[]): Promise<void> {
  const all = Promise.all(
    pending.map((p) =>
      p.settled.then(([a, b]) => {
        if (p.done) return;
        p.done = true;
        settle(ledger, config.schemas[p.j]!, p.j, p.i, a, b);
      }),
    ),
  );
  const waitMs =
    ledger.deadlineAt === undefined
      ? Number.POSITIVE_INFINITY
      : ledger.deadlineAt - config.deadlineMarginMs - performance.now();
  if (waitMs === Number.POSITIVE_INFINITY) {
    await all;
    return;
  }
  let timer: ReturnType<typeof setTimeout> | undefined;
  await Promise.race([
    all,
    new Promise<void>((resolve) => {
      timer = setTimeout(resolve, Math.max(0, waitMs));
    }),
  ]);
  clearTimeout(timer);
  for (const p of pending) {
    if (p.done) continue;
    // Late results are ignored from here on: the record has been given up.
    p.done = true;
    const schema = config.schemas[p.j]!;
    const error = new ImageSchemaError(
      ledger.records[p.i]!,
      p.image,
      schema.vendor,
      'deadline',
      `its validation had not settled ${config.deadlineMarginMs} ms before the deadline margin`,
    );
    reject(ledger, schema, p.i, error);
  }
}

/** Judges a record's two attempts: the view with both outputs, or the first image's failure. */
function settle(ledger: Ledger, schema: CompiledSchema, j: number, i: number, a: Attempt, b: Attempt): void {
  const record = ledger.records[i]!;
  const newImage = judge(record, 'NewImage', schema.vendor, a);
  if (newImage instanceof Error) {
    reject(ledger, schema, i, newImage);
    return;
  }
  let oldImage = judge(record, 'OldImage', schema.vendor, b);
  if (oldImage instanceof InvalidImageError && schema.images === 'new' && record.kind === 'modify') {
    // The state before this change may predate the schema: the change itself is what counts.
    oldImage = undefined;
  } else if (oldImage instanceof Error) {
    reject(ledger, schema, i, oldImage);
    return;
  }
  // The pipeline parses with createRecordParser: its records are StreamRecords.
  const view = (record as unknown as StreamRecord).withImages(newImage, oldImage);
  ledger.views![j]![i] = view as unknown as ClassifiedRecord;
}

function reject(ledger: Ledger, schema: CompiledSchema, i: number, error: Error): void {
  ledger.masks[i]! &= ~schema.mask;
  giveUp(ledger, i, 'invalid-image', error, 0, schema.label);
}

/** The output item, or why there is none. */
function judge(
  record: ClassifiedRecord,
  image: ImageName,
  vendor: string,
  result: Attempt,
): Item | undefined | InvalidImageError | ImageSchemaError {
  if (result === undefined) return undefined;
  const bad = (detail: string, cause?: unknown) =>
    new ImageSchemaError(
      record,
      image,
      vendor,
      cause === undefined ? 'bad-result' : 'threw',
      detail,
      cause === undefined ? undefined : { cause },
    );
  if (result instanceof Thrown) return bad(`validate threw ${describeError(result.error)}`, result.error);
  if (result === null || typeof result !== 'object')
    return bad(
      `validate returned ${describe(result)}, not a Standard Schema result ({ value } or { issues })`,
    );
  const issues = (result as { issues?: unknown }).issues;
  if (issues) {
    if (!Array.isArray(issues)) return bad(`its result's issues are ${describe(issues)}, not an array`);
    return new InvalidImageError(
      record,
      image,
      vendor,
      issues.map((issue) => imageIssue(image, issue)),
    );
  }
  if (!('value' in result)) return bad('its result has neither issues nor a value');
  const value = (result as { value: unknown }).value;
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    return bad(`its output is ${describe(value)}, not an item (an object)`);
  return value as Item;
}

/** A Standard Schema issue in the dead-letter entry's shape: path segments as plain keys. */
function imageIssue(image: ImageName, issue: unknown): ImageIssue {
  if (issue === null || typeof issue !== 'object') return { image, path: [], message: String(issue) };
  const { message, path } = issue as { message?: unknown; path?: unknown };
  const segments: (string | number)[] = [];
  if (Array.isArray(path)) {
    for (const segment of path) {
      const key =
        segment !== null && typeof segment === 'object' ? (segment as { key?: unknown }).key : segment;
      segments.push(
        typeof key === 'number' ? key : typeof key === 'symbol' ? (key.description ?? 'symbol') : String(key),
      );
    }
  }
  return { image, path: segments, message: typeof message === 'string' ? message : String(message) };
}
