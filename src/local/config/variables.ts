import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, extname, resolve } from 'node:path';
import { LOCAL_ACCOUNT_ID } from '../servers/dynamodb-local.js';
import { MAX_JSON_BYTES, parseJsonText, readBoundedText } from './json.js';
import { MAX_NESTING_DEPTH } from './nesting.js';
import { MAX_YAML_LENGTH, parseServerlessYaml } from './yaml.js';

/**
 * serverless v3 variables, read the way the framework reads them, by the one resolver every
 * config reader of the local runtime uses: serverless.yml (ServerlessConfig) and infra/
 * (planLocalResources, which infra/ is to tidewater's own serverless.yml). The forms:
 * ${self:…}, ${opt:…}, ${env:…}, ${sls:stage}, ${sls:instanceId}, ${aws:region},
 * ${aws:accountId}, ${file(…)} / ${file(…):address} on YAML, JSON and JS files, ${strToBool(…)},
 * literal and comma fallbacks (`${env:X, 'default'}`) and nested variables.
 *
 * Why generators: a JS variable file may export a promise or an async function, so resolving can
 * have to wait, while planLocalResources is a synchronous API whose files never make it wait. The
 * resolver yields every value that may be a promise and gets it back settled; `resolveAsync`
 * awaits it, `resolveSync` refuses a promise. One algorithm, run either way.
 */
export type Resolving<T> = Generator<unknown, T, unknown>;

export interface VariableResolverOptions {
  /** The document `${self:…}` reads. */
  document: Readonly<Record<string, unknown>>;
  /** The file the document is (or stands for): `${file(…)}` paths are relative to its folder. */
  file: string;
  /** CLI options for `${opt:…}`; `stage` and `region` are also `${sls:stage}` and `${aws:region}`. */
  options: Readonly<Record<string, string>>;
  /** `${env:…}`. */
  env: Readonly<Record<string, string | undefined>>;
  /** The reader's own error (ServerlessConfigError, InfraDefinitionError) for a message. */
  fail: (message: string) => Error;
}

const VARIABLE = /\$\{([^${}]+)\}/g;
/** Past this many variables in one value, it is taken for a cycle. */
const MAX_DEPTH = 50;

/**
 * The budgets of one resolver (one document), so that a small file cannot make it work or hold
 * memory without end: a value that doubles through `${self:…}` (`b: ${self:a}${self:a}`, `c:
 * ${self:b}${self:b}`…) makes 2^30 characters from thirty lines, an object doubled the same way
 * 2^30 nodes. Each is far past what a real serverless.yml resolves to, and small enough that
 * reaching it takes well under a second.
 */
export const RESOLUTION_LIMITS = {
  /** The longest string a substitution may make (a whole config file is at most this long). */
  stringLength: MAX_YAML_LENGTH,
  /** The characters all substitutions together may make. */
  substitutedCharacters: 16 * 1024 * 1024,
  /** Values walked and variables resolved, together. */
  steps: 200_000,
  /** `${self:…}` references inside one another, and values inside values while resolving. */
  nesting: MAX_NESTING_DEPTH,
} as const;

export class VariableResolver {
  /** Resolved `${self:…}` values by path: resolving is pure, so a value once found stays. */
  private readonly found = new Map<string, unknown>();
  /** Loaded variable files by absolute path, as loaded (a JS module's export may be a promise). */
  private readonly files = new Map<string, unknown>();
  /** What is left of RESOLUTION_LIMITS' budgets, and how deep the walk is now. */
  private readonly spent = { steps: 0, characters: 0, depth: 0 };

  constructor(private readonly settings: VariableResolverOptions) {}

  /**
   * The value at a dotted path with every variable in it resolved, as `${self:path}` gives it;
   * undefined where the path leads nowhere. `''` is the whole document.
   */
  *get(path: string, seen: ReadonlySet<string> = new Set()): Resolving<unknown> {
    if (this.found.has(path)) return this.found.get(path);
    if (seen.has(path)) {
      const chain = [...seen].slice([...seen].indexOf(path));
      throw this.settings.fail(
        `\${self:${path}} refers to itself: ${[...chain, path].map((p) => `\${self:${p}}`).join(' → ')}`,
      );
    }
    if (seen.size >= RESOLUTION_LIMITS.nesting)
      throw this.settings.fail(
        `\${self:…} references nest deeper than ${RESOLUTION_LIMITS.nesting}: ${[...seen]
          .slice(0, 5)
          .map((p) => `\${self:${p}}`)
          .join(' → ')} → …`,
      );
    const within = new Set(seen).add(path);
    let current: unknown = this.settings.document;
    for (const part of path === '' ? [] : path.split('.')) {
      current = yield* this.value(current, within);
      if (current === null || typeof current !== 'object') return undefined;
      current = (current as Record<string, unknown>)[part];
      if (current === undefined) return undefined;
    }
    const value = yield* this.deep(current, within);
    this.found.set(path, value);
    return value;
  }

  /** A value and everything in it, variables resolved. */
  *deep(value: unknown, seen: ReadonlySet<string> = new Set()): Resolving<unknown> {
    this.step('values');
    // A value resolved from a variable is walked inside the one that names it: the depths add up.
    if (++this.spent.depth > RESOLUTION_LIMITS.nesting * 2)
      throw this.settings.fail(
        `values nest deeper than ${RESOLUTION_LIMITS.nesting * 2} levels once variables are resolved`,
      );
    try {
      const resolved = yield* this.value(value, seen);
      if (Array.isArray(resolved)) {
        const out: unknown[] = [];
        for (const item of resolved) out.push(yield* this.deep(item, seen));
        return out;
      }
      if (resolved !== null && typeof resolved === 'object') {
        // Keys are the file's text: defined as own properties, so `__proto__` is one like any other.
        const out: Record<string, unknown> = {};
        for (const [key, item] of Object.entries(resolved))
          Object.defineProperty(out, key, {
            value: yield* this.deep(item, seen),
            enumerable: true,
            writable: true,
            configurable: true,
          });
        return out;
      }
      return resolved;
    } finally {
      this.spent.depth--;
    }
  }

  /** One unit of work spent; past RESOLUTION_LIMITS.steps the document is refused. */
  private step(what: string): void {
    if (++this.spent.steps > RESOLUTION_LIMITS.steps)
      throw this.settings.fail(
        `resolving takes more than ${RESOLUTION_LIMITS.steps} steps (${what}): variables multiply what they name`,
      );
  }

  /**
   * The variables of one value (not of its children), innermost first. A string that is exactly
   * one variable takes the variable's value and type; one embedded in text is spliced in.
   */
  *value(value: unknown, seen: ReadonlySet<string>): Resolving<unknown> {
    let current = value;
    // Messages quote the value as written, never with resolved values spliced in: those may come
    // from the environment (a secret), and the file's text is what the user can find and fix.
    const written = typeof value === 'string' ? value : '';
    const texts = new Set<string>();
    const chain: string[] = [];
    for (let depth = 0; typeof current === 'string'; depth++) {
      const text: string = current;
      const match = firstVariable(text);
      if (!match) break;
      const expression = match[1] as string;
      const step = written.includes(match[0]) ? match[0] : 'a nested variable';
      if (texts.has(text) || depth > MAX_DEPTH)
        throw this.settings.fail(
          `variables in ${JSON.stringify(written)} ${texts.has(text) ? 'form a cycle' : 'nest too deeply'}: ${untilRepeat([...chain, step]).join(' → ')}`,
        );
      texts.add(text);
      chain.push(step);
      const resolved = yield* this.expression(expression, written, seen);
      if (match[0] === text) {
        current = resolved;
      } else {
        if (resolved !== null && typeof resolved === 'object') {
          throw this.settings.fail(
            `${step} resolves to an object but is embedded in the string ${JSON.stringify(written)}`,
          );
        }
        const spliced = String(resolved);
        const length = text.length - match[0].length + spliced.length;
        this.spent.characters += length;
        if (
          length > RESOLUTION_LIMITS.stringLength ||
          this.spent.characters > RESOLUTION_LIMITS.substitutedCharacters
        )
          throw this.settings.fail(
            `variables in ${JSON.stringify(written.slice(0, 200))} make ${
              length > RESOLUTION_LIMITS.stringLength
                ? `a string longer than ${RESOLUTION_LIMITS.stringLength} characters`
                : `more than ${RESOLUTION_LIMITS.substitutedCharacters} characters in all`
            }: ${untilRepeat([...chain]).join(' → ')}`,
          );
        current = text.slice(0, match.index) + spliced + text.slice(match.index + match[0].length);
      }
    }
    return current;
  }

  /** One `${…}`'s content: its sources in turn, the first with a value wins (comma fallbacks). */
  *expression(
    expression: string,
    context: string,
    seen: ReadonlySet<string> = new Set(),
  ): Resolving<unknown> {
    this.step('variables');
    for (const part of splitTopLevel(expression)) {
      const value = yield* this.source(part.trim(), context, seen);
      if (value !== undefined && value !== null) return value;
    }
    const named = context.includes(`\${${expression}}`) ? `\${${expression}}` : 'a nested variable';
    throw this.settings.fail(
      `cannot resolve ${named} (in ${JSON.stringify(context)}): no value and no fallback`,
    );
  }

  /** `--stage`, else provider.stage, else dev (serverless v3's default). */
  *stage(seen: ReadonlySet<string> = new Set()): Resolving<string> {
    if (this.settings.options.stage) return this.settings.options.stage;
    const stage = yield* this.get('provider.stage', seen);
    return typeof stage === 'string' && stage ? stage : 'dev';
  }

  /** `--region`, else provider.region, else us-east-1 (serverless v3's default). */
  *region(seen: ReadonlySet<string> = new Set()): Resolving<string> {
    if (this.settings.options.region) return this.settings.options.region;
    const region = yield* this.get('provider.region', seen);
    return typeof region === 'string' && region ? region : 'us-east-1';
  }

  private *source(source: string, context: string, seen: ReadonlySet<string>): Resolving<unknown> {
    const literal = literalSource(source);
    if (literal) return literal.value;
    if (source === 'null') return null;
    if (source.startsWith('self:')) return yield* this.get(source.slice(5), seen);
    if (source.startsWith('opt:')) return this.settings.options[source.slice(4)];
    if (source.startsWith('env:')) {
      const value = this.settings.env[source.slice(4)];
      return value === '' ? undefined : value;
    }
    if (source === 'sls:stage') return yield* this.stage(seen);
    if (source === 'sls:instanceId') return 'local';
    if (source === 'aws:region') return yield* this.region(seen);
    // The account the local servers' ARNs use; on AWS it is the deploying account's.
    if (source === 'aws:accountId') return LOCAL_ACCOUNT_ID;
    const call = /^(\w+)\((.*)\)(?::(.*))?$/s.exec(source);
    if (call) {
      const [, name, argument = '', address] = call;
      if (name === 'file') return yield* this.fromFile(argument.trim(), address?.trim(), seen);
      if (name === 'strToBool') {
        const value = strToBool(argument);
        if (value === undefined)
          throw this.settings.fail(
            `strToBool() in ${JSON.stringify(context)}: expected true, false, 1 or 0, got a value of ${argument.trim().length} characters`,
          );
        return value;
      }
      throw this.settings.fail(`unsupported variable function ${name}() in ${JSON.stringify(context)}`);
    }
    throw this.settings.fail(`unsupported variable source '${source}' in ${JSON.stringify(context)}`);
  }

  private *fromFile(
    path: string,
    address: string | undefined,
    seen: ReadonlySet<string>,
  ): Resolving<unknown> {
    const target = resolve(dirname(this.settings.file), path.replace(/^(['"])(.*)\1$/s, '$2'));
    let value = yield* this.load(target);
    if (value === undefined || !address) return value;
    for (const part of address.split('.')) {
      value = yield* this.value(value, seen);
      if (value === null || typeof value !== 'object') return undefined;
      value = (value as Record<string, unknown>)[part];
      // A JS file may export functions per address; serverless calls them.
      if (typeof value === 'function') {
        try {
          value = yield (value as (arg: unknown) => unknown)(this.jsArgument());
        } catch (error) {
          throw this.settings.fail(`${part}() in ${target}: ${(error as Error).message}`);
        }
      }
    }
    return value;
  }

  /** A variable file's content; undefined when it does not exist (serverless: no value, so the fallback). */
  private *load(target: string): Resolving<unknown> {
    if (!this.files.has(target)) {
      if (!existsSync(target)) return undefined;
      this.files.set(target, this.read(target));
    }
    try {
      // A module's export may be a promise: settled here each time, so a failure says which file.
      return yield this.files.get(target);
    } catch (error) {
      throw this.settings.fail(`cannot load ${target}: ${(error as Error).message}`);
    }
  }

  private read(target: string): unknown {
    const ext = extname(target).toLowerCase();
    try {
      if (ext === '.js' || ext === '.cjs') {
        const exported: unknown = createRequire(this.settings.file)(target);
        return typeof exported === 'function'
          ? (exported as (arg: unknown) => unknown)(this.jsArgument())
          : exported;
      }
      const text = readBoundedText(target, MAX_JSON_BYTES);
      return ext === '.json' ? parseJsonText(text) : parseServerlessYaml(text, target);
    } catch (error) {
      throw this.settings.fail(`cannot load ${target}: ${(error as Error).message}`);
    }
  }

  /** What serverless passes a JS variable file's function. */
  private jsArgument() {
    return {
      options: this.settings.options,
      resolveVariable: (expression: string) => resolveAsync(this.expression(expression, `\${${expression}}`)),
      resolveConfigurationProperty: (path: string[]) => resolveAsync(this.get(path.join('.'))),
    };
  }
}

/** The steps up to the first that repeats an earlier one (the whole list when none does). */
function untilRepeat(steps: readonly string[]): string[] {
  const end = steps.findIndex((step, i) => steps.indexOf(step) < i);
  return steps.slice(0, end === -1 ? steps.length : end + 1);
}

/** Runs a resolution that may wait on JS files. */
export async function resolveAsync<T>(resolving: Resolving<T>): Promise<T> {
  let step = resolving.next();
  while (!step.done) {
    let settled: unknown;
    try {
      settled = await step.value;
    } catch (error) {
      step = resolving.throw(error);
      continue;
    }
    step = resolving.next(settled);
  }
  return step.value;
}

/** Runs a resolution that must not wait: a promise (from a JS file) is an error. */
export function resolveSync<T>(resolving: Resolving<T>): T {
  let step = resolving.next();
  while (!step.done) {
    const value = step.value;
    step =
      typeof (value as { then?: unknown } | null)?.then === 'function'
        ? resolving.throw(new Error('it is a promise, and this reader cannot wait for one'))
        : resolving.next(value);
  }
  return step.value;
}

/**
 * serverless v3 reads `${…}` as a variable only when it opens with a lower-case source type and
 * `:` or `(` (`${self:…}`, `${file(…)}`); `${AWS::Region}`, `${Bucket.Arn}` or `${name}` are left
 * as they are, for CloudFormation's Fn::Sub.
 */
function firstVariable(text: string): RegExpExecArray | undefined {
  for (const match of text.matchAll(VARIABLE))
    if (/^\s*[a-z][a-zA-Z0-9]*(\(|:(?!:))/.test(match[1] as string)) return match as RegExpExecArray;
  return undefined;
}

/** A `${…}`'s comma-separated sources, commas inside quotes or parentheses kept. */
function splitTopLevel(expression: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let quote: string | undefined;
  let start = 0;
  for (let i = 0; i < expression.length; i++) {
    const c = expression[i];
    if (quote) {
      if (c === quote) quote = undefined;
    } else if (c === "'" || c === '"') quote = c;
    else if (c === '(') depth++;
    else if (c === ')') depth--;
    else if (c === ',' && depth === 0) {
      parts.push(expression.slice(start, i));
      start = i + 1;
    }
  }
  parts.push(expression.slice(start));
  return parts;
}

/** A literal variable source: a quoted string, a number, true or false; undefined if not a literal. */
export function literalSource(source: string): { value: string | number | boolean } | undefined {
  const quoted = /^(['"])(.*)\1$/s.exec(source);
  if (quoted) return { value: quoted[2] ?? '' };
  if (/^-?\d+(\.\d+)?$/.test(source)) return { value: Number(source) };
  if (source === 'true' || source === 'false') return { value: source === 'true' };
  return undefined;
}

/**
 * `${strToBool(…)}` as serverless v3 resolves it: the argument (quotes removed), trimmed and
 * lower-cased, is true for 'true' or '1' and false for 'false' or '0'; anything else is an error in
 * the framework, so it is undefined here for the caller to throw its own error.
 */
export function strToBool(argument: string): boolean | undefined {
  const text = argument
    .trim()
    .replace(/^(['"])(.*)\1$/s, '$2')
    .trim()
    .toLowerCase();
  if (text === 'true' || text === '1') return true;
  if (text === 'false' || text === '0') return false;
  return undefined;
}
