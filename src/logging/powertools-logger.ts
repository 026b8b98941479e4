import { defineOptions } from '../core/options.js';
import { type LoggerOptions, SAFE_VALUE_OPTIONS, settingsFrom } from './logger-options.js';
import { type SafeValueSettings, toLogSafe } from './safe-value.js';

/** Powertools' level methods: the message first, then objects whose fields join the line. */
type MessageFirstMethod = (message: string, ...extra: Record<string, unknown>[]) => void;

/**
 * What tidewater uses of a Powertools Logger (`@aws-lambda-powertools/logger` 2.x), typed
 * structurally so tidewater needs no Powertools at run time. `createChild` (where pino has
 * `child`) is how one is recognized.
 */
export interface PowertoolsLoggerLike {
  debug: MessageFirstMethod;
  info: MessageFirstMethod;
  warn: MessageFirstMethod;
  error: MessageFirstMethod;
  createChild(options?: Record<string, unknown>): unknown;
}

type FieldsFirstMethod = (obj: object | string, msg?: string) => void;

/**
 * A Powertools Logger behind pino's call shape (`logger.warn(fields, message)`), the shape the
 * pipeline, sinks and aggregateVotes call.
 */
export interface PowertoolsLoggerAdapter {
  debug: FieldsFirstMethod;
  info: FieldsFirstMethod;
  warn: FieldsFirstMethod;
  error: FieldsFirstMethod;
  child(bindings: Record<string, unknown>): PowertoolsLoggerAdapter;
}

/** What to hide, as createLogger takes it. The Powertools Logger keeps its own level and output. */
export type PowertoolsAdapterOptions = Pick<
  LoggerOptions,
  'logImages' | 'redactKeys' | 'redact' | 'maxDepth'
>;

const readOptions = /* @__PURE__ */ defineOptions<PowertoolsAdapterOptions>()(
  'fromPowertoolsLogger',
  SAFE_VALUE_OPTIONS,
);
const NO_FIELDS: Readonly<Record<string, unknown>> = Object.freeze({});

/** A Powertools Logger: message-first methods and createChild, and no pino `child`. */
export function isPowertoolsLogger(value: unknown): value is PowertoolsLoggerLike {
  if (value === null || typeof value !== 'object') return false;
  const logger = value as Record<string, unknown>;
  return (
    typeof logger.createChild === 'function' &&
    typeof logger.child !== 'function' &&
    typeof logger.debug === 'function' &&
    typeof logger.info === 'function' &&
    typeof logger.warn === 'function' &&
    typeof logger.error === 'function'
  );
}

/**
 * Children keep their bindings here and call the logger they were made from, rather than
 * `createChild()`: that builds a whole Logger (options merged, a new Console) per call, and it
 * snapshots the parent, whereas calling the user's logger keeps what it has at log time — the
 * Lambda context from its injectLambdaContext middleware, appended keys, a sampled debug level.
 */
class Adapter implements PowertoolsLoggerAdapter {
  readonly #target: PowertoolsLoggerLike;
  readonly #settings: SafeValueSettings;
  /** Already JSON-safe and redacted: walked once per child, not per line. */
  readonly #bindings: Readonly<Record<string, unknown>>;

  constructor(
    target: PowertoolsLoggerLike,
    settings: SafeValueSettings,
    bindings: Readonly<Record<string, unknown>>,
  ) {
    this.#target = target;
    this.#settings = settings;
    this.#bindings = bindings;
  }

  // No level check before the payload walk: Powertools' log buffering keeps lines below the level
  // (flushed on an error), which only the target knows about. tidewater logs only on problems.
  debug(obj: object | string, msg?: string): void {
    this.#target.debug(messageOf(obj, msg), this.#bindings, this.#fields(obj));
  }

  info(obj: object | string, msg?: string): void {
    this.#target.info(messageOf(obj, msg), this.#bindings, this.#fields(obj));
  }

  warn(obj: object | string, msg?: string): void {
    this.#target.warn(messageOf(obj, msg), this.#bindings, this.#fields(obj));
  }

  error(obj: object | string, msg?: string): void {
    this.#target.error(messageOf(obj, msg), this.#bindings, this.#fields(obj));
  }

  child(bindings: Record<string, unknown>): PowertoolsLoggerAdapter {
    const safe = toLogSafe(bindings, this.#settings) as Record<string, unknown>;
    return new Adapter(this.#target, this.#settings, { ...this.#bindings, ...safe });
  }

  /** The payload as tidewater's own loggers write it: JSON-safe, images redacted, errors under `err`. */
  #fields(obj: object | string): Record<string, unknown> {
    if (typeof obj === 'string') return NO_FIELDS;
    return toLogSafe(obj instanceof Error ? { err: obj } : obj, this.#settings) as Record<string, unknown>;
  }
}

/** pino's rules: a string is the message; an error alone is logged with its own message. */
function messageOf(obj: object | string, msg: string | undefined): string {
  if (typeof obj === 'string') return obj;
  if (msg !== undefined) return String(msg);
  return obj instanceof Error ? obj.message : '';
}

/**
 * A Powertools Logger with pino's call shape, for whatever takes a pino-style logger: the
 * pipeline's `logger` option (`logger: fromPowertoolsLogger(logger)`, which links this adapter
 * into the handler; a bare Powertools Logger is refused there) or `aggregateVotes`. Payloads go through
 * the same JSON-safe walk and redaction as createLogger's: item images are `[Redacted]` unless
 * `logImages: true`. Lines are Powertools' own (level, message, service, timestamp, its keys),
 * with tidewater's fields and the child bindings beside them.
 */
export function fromPowertoolsLogger(
  logger: PowertoolsLoggerLike,
  options?: PowertoolsAdapterOptions,
): PowertoolsLoggerAdapter {
  const o = readOptions(options);
  if (!isPowertoolsLogger(logger)) {
    throw readOptions.fail('expected a Powertools Logger (createChild, debug, info, warn, error)');
  }
  return new Adapter(logger, settingsFrom(o), NO_FIELDS);
}
