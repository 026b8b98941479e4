import { type DestinationStream, type Level, type Logger, pino } from 'pino';
import { InvalidOptionsError } from '../records/errors.js';
import { assertOptions } from '../records/options.js';
import { IMAGE_KEYS, KEY_KEYS, type SafeValueSettings, toLogSafe } from './safe-value.js';

export interface LoggerOptions {
  /** Default: `LOG_LEVEL` from the environment, else `'info'`. */
  level?: Level | 'silent';
  /** Added to every line as `name`. */
  name?: string;
  /**
   * Log item images (NewImage / OldImage / newImage / oldImage) instead of `[Redacted]`.
   * Default false: images hold user data and land in CloudWatch otherwise.
   */
  logImages?: boolean;
  /** Also redact primary keys (Keys / keys). Default false: keys identify records in logs. */
  redactKeys?: boolean;
  /** More property names to redact at any depth (e.g. `['email', 'item']`). */
  redact?: readonly string[];
  /** How deep payloads are walked before being cut to `[Object]`. Default 12. */
  maxDepth?: number;
  /** Fields on every line; `null` drops pino's pid / hostname. Default: pino's. */
  base?: Record<string, unknown> | null;
  /** Where lines go. Default: stdout (what Lambda ships to CloudWatch). */
  destination?: DestinationStream;
}

const LOGGER_OPTIONS = [
  'level',
  'name',
  'logImages',
  'redactKeys',
  'redact',
  'maxDepth',
  'base',
  'destination',
] as const;
const LEVELS = new Set(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']);

function fail(detail: string): never {
  throw new InvalidOptionsError(`createLogger: ${detail}`);
}

function settingsFrom(options: LoggerOptions | undefined): SafeValueSettings {
  const logImages = options?.logImages ?? false;
  const redactKeys = options?.redactKeys ?? false;
  const extra = options?.redact ?? [];
  const maxDepth = options?.maxDepth ?? 12;
  if (typeof logImages !== 'boolean') fail("option 'logImages' must be a boolean");
  if (typeof redactKeys !== 'boolean') fail("option 'redactKeys' must be a boolean");
  if (!Array.isArray(extra) || extra.some((k) => typeof k !== 'string' || k === '')) {
    fail("option 'redact' must be an array of property names");
  }
  if (!Number.isInteger(maxDepth) || maxDepth < 1) fail("option 'maxDepth' must be a positive integer");
  const redact = new Set<string>(extra);
  if (!logImages) for (const k of IMAGE_KEYS) redact.add(k);
  if (redactKeys) for (const k of KEY_KEYS) redact.add(k);
  return { redact, maxDepth };
}

/**
 * A pino logger whose payloads are JSON-safe for stream data (bigint, NumberValue, Set,
 * Uint8Array, records) and whose item images are redacted unless `logImages: true`.
 * Redaction is by property name at any depth, so images inside records, raw records and
 * dead-letter entries are covered without listing paths.
 */
export function createLogger(options?: LoggerOptions): Logger {
  assertOptions(options, LOGGER_OPTIONS, 'createLogger');
  const settings = settingsFrom(options);
  const level = options?.level ?? process.env.LOG_LEVEL ?? 'info';
  if (!LEVELS.has(level))
    fail(`option 'level' must be one of ${[...LEVELS].join(', ')}, got ${JSON.stringify(level)}`);
  if (options?.name !== undefined && typeof options.name !== 'string') fail("option 'name' must be a string");
  const base = options?.base;
  if (base !== undefined && base !== null && (typeof base !== 'object' || Array.isArray(base))) {
    fail("option 'base' must be an object or null");
  }
  const destination = options?.destination;
  if (destination !== undefined && typeof (destination as { write?: unknown }).write !== 'function') {
    fail("option 'destination' must be a writable stream");
  }
  const safe = (object: Record<string, unknown>) => toLogSafe(object, settings) as Record<string, unknown>;
  const pinoOptions = {
    level,
    ...(options?.name !== undefined ? { name: options.name } : {}),
    ...(base !== undefined ? { base } : {}),
    formatters: { log: safe, bindings: safe },
    // The walk already turned errors into pino's error shape; pino's own err serializer would
    // see a plain object and relabel its type as "Object".
    serializers: { err: (value: unknown) => value },
  };
  // pino's own default destination writes stdout synchronously: nothing is lost when Lambda
  // freezes the process between invocations.
  const logger = destination === undefined ? pino(pinoOptions) : pino(pinoOptions, destination);
  // pino applies the bindings formatter to the root's bindings only, not to child() bindings;
  // children inherit this own property through their prototype, so every level is covered.
  const child = logger.child;
  Object.defineProperty(logger, 'child', {
    value: function safeChild(this: Logger, bindings: Record<string, unknown>, childOptions?: object) {
      return child.call(this, safe(bindings), childOptions);
    },
    writable: true,
    configurable: true,
  });
  return logger;
}
