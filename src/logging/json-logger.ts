import { hostname } from 'node:os';
import { type LoggerOptions, levelFrom, readLoggerOptions, settingsFrom } from './logger-options.js';
import { DEFAULT_SETTINGS, type SafeValueSettings, toLogSafe } from './safe-value.js';

/** pino's level numbers: the lines are indistinguishable from createLogger's. */
const LEVEL_VALUES: Readonly<Record<string, number>> = {
  trace: 10,
  debug: 20,
  info: 30,
  warn: 40,
  error: 50,
  fatal: 60,
  silent: Number.POSITIVE_INFINITY,
};

type LogMethod = (obj: object | string, msg?: string) => void;

/** The logger createJsonLogger returns: pino's method shapes, which is what PipelineLogger needs. */
export interface JsonLogger {
  readonly level: string;
  trace: LogMethod;
  debug: LogMethod;
  info: LogMethod;
  warn: LogMethod;
  error: LogMethod;
  fatal: LogMethod;
  child(bindings: Record<string, unknown>): JsonLogger;
}

interface Shared {
  readonly threshold: number;
  readonly level: string;
  readonly settings: SafeValueSettings;
  readonly write: (line: string) => unknown;
}

/** `"pid":1,"hostname":"h","name":"x",...` — the bindings serialized once, not per line. */
function bindingsText(bindings: Record<string, unknown>, settings: SafeValueSettings): string {
  const text = JSON.stringify(toLogSafe(bindings, settings));
  return text.length > 2 ? text.slice(1, -1) : '';
}

function make(shared: Shared, bindings: string): JsonLogger {
  const method =
    (value: number): LogMethod =>
    (obj, msg) => {
      if (value < shared.threshold) return;
      let fields: object;
      let message = msg;
      if (typeof obj === 'string') {
        fields = {};
        message = obj;
      } else if (obj instanceof Error) {
        fields = { err: obj };
        message ??= obj.message;
      } else fields = obj;
      const body = JSON.stringify(toLogSafe(fields, shared.settings));
      let line = `{"level":${value},"time":${Date.now()}`;
      if (bindings !== '') line += `,${bindings}`;
      if (body.length > 2) line += `,${body.slice(1, -1)}`;
      if (message !== undefined) line += `,"msg":${JSON.stringify(String(message))}`;
      shared.write(`${line}}\n`);
    };
  return {
    level: shared.level,
    trace: method(10),
    debug: method(20),
    info: method(30),
    warn: method(40),
    error: method(50),
    fatal: method(60),
    child(childBindings) {
      const more = bindingsText(childBindings, shared.settings);
      return make(shared, bindings === '' ? more : more === '' ? bindings : `${bindings},${more}`);
    },
  };
}

/**
 * A small structured JSON logger writing the lines createLogger (pino) writes — same level
 * numbers, `time`, `pid`/`hostname` (or `base`), `name`, bindings, payload and `msg`, the same
 * JSON-safe payloads and image redaction — without loading pino, whose module graph (worker
 * threads, streams) costs milliseconds of every cold start. It writes synchronously (stdout by
 * default), so nothing is lost when Lambda freezes the process. The pipeline's default logger;
 * pass `createLogger()` for pino's transports and features.
 */
export function createJsonLogger(options?: LoggerOptions): JsonLogger {
  const o = readLoggerOptions(options, 'createJsonLogger');
  return jsonLogger(o, settingsFrom(o));
}

/**
 * @internal createJsonLogger({ logImages }) without reading options: the pipeline's default
 * logger, so a handler's bundle links no logger option reader.
 */
export function defaultJsonLogger(logImages: boolean): JsonLogger {
  return jsonLogger(
    {},
    logImages ? { redact: new Set(), maxDepth: DEFAULT_SETTINGS.maxDepth } : DEFAULT_SETTINGS,
  );
}

function jsonLogger(
  o: Pick<LoggerOptions, 'level' | 'name' | 'base' | 'destination'>,
  settings: SafeValueSettings,
): JsonLogger {
  const level = levelFrom(o.level, 'createJsonLogger');
  const destination = o.destination ?? process.stdout;
  const base = o.base === undefined ? { pid: process.pid, hostname: hostname() } : o.base;
  const root: Record<string, unknown> = { ...base };
  // As pino: `name` is part of the base bindings, so `base: null` drops it too.
  if (o.name !== undefined && base !== null) root.name = o.name;
  const shared: Shared = {
    threshold: LEVEL_VALUES[level] as number,
    level,
    settings,
    write: (line) => destination.write(line),
  };
  return make(shared, bindingsText(root, settings));
}
