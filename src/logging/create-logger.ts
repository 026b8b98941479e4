import { type Level, type Logger, pino } from 'pino';
import { type LoggerOptions, levelFrom, readLoggerOptions, settingsFrom } from './logger-options.js';
import { toLogSafe } from './safe-value.js';

/**
 * A pino logger whose payloads are JSON-safe for stream data (bigint, NumberValue, Set,
 * Uint8Array, records) and whose item images are redacted unless `logImages: true`.
 * Redaction is by property name at any depth, so images inside records, raw records and
 * dead-letter entries are covered without listing paths.
 */
export function createLogger(options?: LoggerOptions): Logger {
  const o = readLoggerOptions(options);
  const settings = settingsFrom(o);
  const level = levelFrom(o.level, 'createLogger');
  const { base, destination } = o;
  const safe = (object: Record<string, unknown>) => toLogSafe(object, settings) as Record<string, unknown>;
  const pinoOptions = {
    level: level as Level | 'silent',
    ...(o.name !== undefined ? { name: o.name } : {}),
    ...(base !== undefined ? { base } : {}),
    formatters: { log: safe, bindings: safe },
    // The walk already turned errors into pino's error shape; pino's own err serializer would
    // see a plain object and relabel its type as "Object".
    serializers: { err: (value: unknown) => value },
  };
  // pino's own default destination writes stdout synchronously: nothing is lost when Lambda
  // freezes the process between invocations.
  const logger = destination === undefined ? pino(pinoOptions) : pino(pinoOptions, destination as never);
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
