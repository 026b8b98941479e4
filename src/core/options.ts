import { InvalidOptionsError } from './errors.js';

/**
 * The one options reader. A module declares its options next to its Options interface:
 *
 *   const readOptions = defineOptions<S3ArchiveSinkOptions>()('S3ArchiveSink', {
 *     bucket: { kind: 'nonEmptyString', required: true },
 *     concurrency: { kind: 'integer', min: 1, max: 64, default: 4 },
 *     …
 *   });
 *   const o = readOptions(options); // o.concurrency: number, defaults applied
 *
 * and every failure has the same shape, whichever module it comes from:
 *   `<where>: option '<key>' must be <expected>, got <value>`
 *   `<where>: option '<key>' is required`
 *   `<where>: unknown option '<key>' (known: a, b, c)`
 *   `<where>: options must be an object, got <value>`
 * Readers run at configuration time (constructors, compileConfig, cold start), never per record.
 */

interface Rule<T> {
  /** The value when the option is absent (or `undefined`). */
  readonly default?: T;
  /** Absent is an error. Must be set for keys the Options interface does not mark optional. */
  readonly required?: boolean;
  /** Why the option is required, appended to the "is required" message. */
  readonly why?: string;
}

export type OptionRule<T = unknown> =
  | (Rule<T> & { readonly kind: 'string' | 'nonEmptyString' | 'boolean' | 'function' | 'client' })
  | (Rule<T> & { readonly kind: 'integer' | 'number'; readonly min?: number; readonly max?: number })
  | (Rule<T> & { readonly kind: 'enum'; readonly values: readonly T[] })
  /** An object (a class instance too) with these methods; `expected` overrides the message's wording. */
  | (Rule<T> & { readonly kind: 'object'; readonly methods?: readonly string[]; readonly expected?: string })
  | (Rule<T> & {
      readonly kind: 'custom';
      /** Completes "must be …" in the message: `a KMS key id, alias or ARN`. */
      readonly expected: string;
      readonly check: (value: unknown) => boolean;
    });

/** One rule per key of O, none missing; keys O requires must be declared `required: true`. */
export type OptionSpecs<O> = {
  readonly [K in keyof O]-?: OptionRule<Exclude<O[K], undefined>> &
    (undefined extends O[K] ? unknown : { readonly required: true });
};

/** O as the reader returns it: every key present, keys with a default no longer undefined. */
export type ResolvedOptions<O, S> = {
  readonly [K in keyof O]-?: S extends { readonly [P in K]: { readonly default: unknown } }
    ? Exclude<O[K], undefined>
    : O[K];
};

/** Builds the error a reader throws; a module may throw its own subclass (votes: InvalidVoteOptionsError). */
export type OptionErrorFactory = (message: string, option: string | undefined) => InvalidOptionsError;

export interface OptionReader<O, S> {
  /**
   * Checks `input` and returns its values with defaults applied. `where` and `prefix` place a
   * nested object in the message (`pipeline`, `retry.`) when it is read on behalf of a parent.
   */
  (input: unknown, where?: string, prefix?: string): ResolvedOptions<O, S>;
  readonly where: string;
  readonly keys: readonly string[];
  /** An error in the reader's shape for a rule that spans keys (`give exactly one of …`). */
  fail(detail: string, option?: string, where?: string): InvalidOptionsError;
}

const defaultError: OptionErrorFactory = (message, option) => new InvalidOptionsError(message, { option });

/**
 * Every declared key of `given` checked and defaulted; `noun` is `option` or `environment
 * variable`. The rules are read as declared: compiling each into a closure and its message text
 * cost every cold start closures and strings for readers a handler may never call (issue 37's
 * profile); `refusal` switches on the rule's kind and builds the text only when it throws.
 */
function resolve(
  keys: readonly string[],
  specs: Readonly<Record<string, OptionRule>>,
  given: Readonly<Record<string, unknown>> | undefined,
  at: string,
  prefix: string,
  noun: string,
  error: OptionErrorFactory,
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i]!;
    const rule = specs[key]!;
    const value = given?.[key];
    const name = `${prefix}${key}`;
    if (value === undefined) {
      if (rule.required === true) {
        const why = rule.why === undefined ? '' : `: ${rule.why}`;
        throw error(`${at}: ${noun} '${name}' is required${why}`, name);
      }
      out[key] = rule.default;
      continue;
    }
    const refused = refusal(rule, value);
    if (refused !== undefined)
      throw error(`${at}: ${noun} '${name}' must be ${refused}, got ${describe(value)}`, name);
    out[key] = value;
  }
  return out;
}

/**
 * `defineOptions<MyOptions>()('MyThing', { … })`. Curried so that O is given and the spec's
 * literal types (which keys have defaults) are inferred.
 */
export function defineOptions<O extends object>(settings?: { error?: OptionErrorFactory }) {
  const error = settings?.error ?? defaultError;
  return <const S extends OptionSpecs<O>>(where: string, specs: S): OptionReader<O, S> => {
    const rules = specs as Readonly<Record<string, OptionRule>>;
    const keys = Object.keys(rules);
    const known = keys.length === 0 ? 'none' : keys.join(', ');
    // Absent options are common (`unmarshall(map)`): one shared, frozen result of the defaults.
    const defaults = keys.some((key) => rules[key]!.required === true)
      ? undefined
      : Object.freeze(resolve(keys, rules, undefined, where, '', 'option', error));
    const read = (input: unknown, at = where, prefix = ''): ResolvedOptions<O, S> => {
      if (input === undefined && defaults !== undefined) return defaults as ResolvedOptions<O, S>;
      if (input !== undefined && (input === null || typeof input !== 'object' || Array.isArray(input))) {
        const name = prefix.slice(0, -1);
        throw error(
          `${at}: ${name === '' ? 'options' : `option '${name}'`} must be an object, got ${describe(input)}`,
          name === '' ? undefined : name,
        );
      }
      const given = input as Record<string, unknown> | undefined;
      if (given !== undefined) {
        for (const key in given) {
          if (!keys.includes(key)) {
            throw error(`${at}: unknown option '${prefix}${key}' (known: ${known})`, `${prefix}${key}`);
          }
        }
      }
      return resolve(keys, rules, given, at, prefix, 'option', error) as ResolvedOptions<O, S>;
    };
    return Object.assign(read, {
      where,
      keys,
      fail: (detail: string, option?: string, at = where) => error(`${at}: ${detail}`, option),
    });
  };
}

export type Environment = Readonly<Record<string, string | undefined>>;

export interface EnvironmentReader<O, S> {
  (env: Environment): ResolvedOptions<O, S>;
  fail(detail: string, variable?: string): InvalidOptionsError;
}

/**
 * The same reader for a Lambda's environment, where O's keys are variable names: text is trimmed
 * and empty text is unset; integer and number rules read the text as a number (`got the string
 * "ten"` otherwise); a custom rule sees the text as set, untrimmed, so it can refuse `""` or
 * `" a/"`. Other variables are ignored. For cold starts: a bad deployment fails the init, loudly.
 */
export function defineEnvironment<O extends object>(settings?: { error?: OptionErrorFactory }) {
  const error = settings?.error ?? defaultError;
  return <const S extends OptionSpecs<O>>(where: string, specs: S): EnvironmentReader<O, S> => {
    const rules = specs as Readonly<Record<string, OptionRule>>;
    const keys = Object.keys(rules);
    const read = (env: Environment): ResolvedOptions<O, S> => {
      const given: Record<string, unknown> = {};
      for (let i = 0; i < keys.length; i++) {
        const key = keys[i]!;
        const rule = rules[key]!;
        const text = env[key];
        if (text === undefined) continue;
        if (rule.kind === 'custom') given[key] = text;
        else if (text.trim() !== '') {
          const trimmed = text.trim();
          const number = Number(trimmed);
          given[key] =
            (rule.kind === 'integer' || rule.kind === 'number') && Number.isFinite(number) ? number : trimmed;
        }
      }
      return resolve(keys, rules, given, where, '', 'environment variable', error) as ResolvedOptions<O, S>;
    };
    return Object.assign(read, {
      fail: (detail: string, variable?: string) => error(`${where}: ${detail}`, variable),
    });
  };
}

/**
 * Undefined when `value` passes `rule`; otherwise what completes "must be …" in the message, built
 * only then.
 */
function refusal(rule: OptionRule, value: unknown): string | undefined {
  switch (rule.kind) {
    case 'string':
    case 'boolean':
    case 'function':
      return typeof value === rule.kind ? undefined : `a ${rule.kind}`;
    case 'nonEmptyString':
      return typeof value === 'string' && value !== '' ? undefined : 'a non-empty string';
    case 'client':
      return hasMethods(value, ['send']) ? undefined : 'an AWS SDK v3 client (with send())';
    case 'integer':
    case 'number': {
      const { kind, min, max } = rule;
      return typeof value === 'number' &&
        (kind === 'integer' ? Number.isInteger(value) : Number.isFinite(value)) &&
        (min === undefined || value >= min) &&
        (max === undefined || value <= max)
        ? undefined
        : range(kind, min, max);
    }
    case 'enum':
      return rule.values.includes(value)
        ? undefined
        : `one of ${rule.values.map((v) => (typeof v === 'string' ? `'${v}'` : String(v))).join(', ')}`;
    case 'object': {
      const methods = rule.methods ?? [];
      if (hasMethods(value, methods)) return undefined;
      return (
        rule.expected ??
        (methods.length ? `an object with ${methods.map((m) => `${m}()`).join(', ')}` : 'an object')
      );
    }
    case 'custom':
      return rule.check(value) ? undefined : rule.expected;
  }
}

/** An object or class instance (duck-typed: an application may bundle its own SDK copy, so no instanceof). */
function hasMethods(value: unknown, methods: readonly string[]): boolean {
  if (value === null || typeof value !== 'object') return false;
  for (const m of methods) if (typeof (value as Record<string, unknown>)[m] !== 'function') return false;
  return true;
}

/** `an integer in [1, 20]`, `a finite number in [0, ∞)`, `an integer`. */
function range(noun: 'integer' | 'number', min: number | undefined, max: number | undefined): string {
  const what = noun === 'integer' ? 'an integer' : 'a finite number';
  if (min === undefined && max === undefined) return what;
  return `${what} in ${min === undefined ? '(-∞' : `[${min}`}, ${max === undefined ? '∞)' : `${max}]`}`;
}

/** A value as an error message shows it: `the string "abc"`, `number 3`, `an array`, `a Date`. */
export function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (value instanceof Uint8Array) return 'a Uint8Array';
  if (typeof value === 'object') {
    const name: unknown = value.constructor?.name;
    return typeof name === 'string' && name !== ''
      ? `${/^[AEIOU]/.test(name) ? 'an' : 'a'} ${name}`
      : 'an object';
  }
  if (typeof value === 'string')
    return `the string ${JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value)}`;
  return `${typeof value} ${String(value)}`;
}
