import { InvalidOptionsError } from '../records/errors.js';
import { IMAGE_KEYS, KEY_KEYS, type SafeValueSettings } from './safe-value.js';

/** pino's level names. */
export type Level = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace';

/** Where log lines go: anything with write(line) (a pino DestinationStream, process.stdout). */
export interface LogDestination {
  write(line: string): unknown;
}

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
  destination?: LogDestination;
}
export const LOGGER_OPTIONS = [
  'level',
  'name',
  'logImages',
  'redactKeys',
  'redact',
  'maxDepth',
  'base',
  'destination',
] as const;
export const LEVELS = new Set(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']);

export function fail(detail: string, where = 'createLogger'): never {
  throw new InvalidOptionsError(`${where}: ${detail}`);
}

export function settingsFrom(options: LoggerOptions | undefined, where = 'createLogger'): SafeValueSettings {
  const logImages = options?.logImages ?? false;
  const redactKeys = options?.redactKeys ?? false;
  const extra = options?.redact ?? [];
  const maxDepth = options?.maxDepth ?? 12;
  if (typeof logImages !== 'boolean') fail("option 'logImages' must be a boolean", where);
  if (typeof redactKeys !== 'boolean') fail("option 'redactKeys' must be a boolean", where);
  if (!Array.isArray(extra) || extra.some((k) => typeof k !== 'string' || k === '')) {
    fail("option 'redact' must be an array of property names", where);
  }
  if (!Number.isInteger(maxDepth) || maxDepth < 1)
    fail("option 'maxDepth' must be a positive integer", where);
  const redact = new Set<string>(extra);
  if (!logImages) for (const k of IMAGE_KEYS) redact.add(k);
  if (redactKeys) for (const k of KEY_KEYS) redact.add(k);
  return { redact, maxDepth };
}

/** The options every logger factory checks the same way; returns the level. */
export function checkedCommon(options: LoggerOptions | undefined, where = 'createLogger'): string {
  const level = options?.level ?? process.env.LOG_LEVEL ?? 'info';
  if (!LEVELS.has(level))
    fail(`option 'level' must be one of ${[...LEVELS].join(', ')}, got ${JSON.stringify(level)}`, where);
  if (options?.name !== undefined && typeof options.name !== 'string')
    fail("option 'name' must be a string", where);
  const base = options?.base;
  if (base !== undefined && base !== null && (typeof base !== 'object' || Array.isArray(base))) {
    fail("option 'base' must be an object or null", where);
  }
  const destination = options?.destination;
  if (destination !== undefined && typeof (destination as { write?: unknown }).write !== 'function') {
    fail("option 'destination' must be a writable stream", where);
  }
  return level;
}
