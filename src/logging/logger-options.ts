import { InvalidOptionsError } from '../core/errors.js';
import { defineOptions } from '../core/options.js';
import { IMAGE_KEYS, KEY_KEYS, type SafeValueSettings } from './safe-value.js';

/** pino's level names. */
export type Level = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace';

/** Where log lines go: anything with write(line) (a pino DestinationStream, process.stdout). */
export interface LogDestination {
  write(line: string): unknown;
}

/** Options of createLogger and createJsonLogger: level, name, image logging, redaction, destination. */
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
export const LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

// The rules of the JSON-safe walk and redaction, the same for every logger tidewater makes or
// adapts. Named in each spec, not spread from a shared object: a spread would keep the reader in
// every bundle (the bundler cannot tell it has no side effect), and the pipeline's default logger
// reads no options.
const LOG_IMAGES = { kind: 'boolean', default: false } as const;
const REDACT_KEYS = { kind: 'boolean', default: false } as const;
const REDACT = {
  kind: 'custom',
  expected: 'an array of property names',
  check: (v: unknown) => Array.isArray(v) && v.every((k) => typeof k === 'string' && k !== ''),
  default: [],
} as const;
const MAX_DEPTH = { kind: 'integer', min: 1, default: 12 } as const;

/** The options of the JSON-safe walk and redaction, the same for every logger tidewater makes or adapts. */
export const SAFE_VALUE_OPTIONS = {
  logImages: LOG_IMAGES,
  redactKeys: REDACT_KEYS,
  redact: REDACT,
  maxDepth: MAX_DEPTH,
} as const;

/** createLogger's and createJsonLogger's options (`where` names the factory). */
export const readLoggerOptions = /* @__PURE__ */ defineOptions<LoggerOptions>()('createLogger', {
  level: { kind: 'enum', values: LEVELS },
  name: { kind: 'string' },
  logImages: LOG_IMAGES,
  redactKeys: REDACT_KEYS,
  redact: REDACT,
  maxDepth: MAX_DEPTH,
  base: {
    kind: 'custom',
    expected: 'an object or null',
    check: (v) => v === null || (typeof v === 'object' && !Array.isArray(v)),
  },
  destination: { kind: 'object', methods: ['write'], expected: 'a writable stream (with write())' },
});

export function settingsFrom(options: {
  readonly logImages: boolean;
  readonly redactKeys: boolean;
  readonly redact: readonly string[];
  readonly maxDepth: number;
}): SafeValueSettings {
  const redact = new Set<string>(options.redact);
  if (!options.logImages) for (const k of IMAGE_KEYS) redact.add(k);
  if (options.redactKeys) for (const k of KEY_KEYS) redact.add(k);
  return { redact, maxDepth: options.maxDepth };
}

/** The level option, else `LOG_LEVEL` from the environment (checked the same way), else `'info'`. */
export function levelFrom(level: Level | 'silent' | undefined, where: string): Level | 'silent' {
  if (level !== undefined) return level;
  const env = process.env.LOG_LEVEL;
  if (env === undefined) return 'info';
  // The reader's message shape, without the reader: the pipeline's default logger reads no options.
  if (!(LEVELS as readonly string[]).includes(env)) {
    throw new InvalidOptionsError(
      `${where}: LOG_LEVEL must be one of ${LEVELS.join(', ')}, got ${JSON.stringify(env)}`,
      { option: 'level' },
    );
  }
  return env as Level | 'silent';
}
