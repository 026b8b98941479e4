import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, extname, resolve } from 'node:path';
import yaml from 'js-yaml';
import type { FilterPattern } from '../filters/index.js';
import { assertOptions } from '../records/options.js';
import type { EventSourceMappingOptions } from './emulator.js';
import { ServerlessConfigError } from './errors.js';
import { builtPathOf } from './handler-loader.js';
import { literalSource, strToBool } from './variables.js';

export interface ServerlessConfigOptions {
  /** Path to serverless.yml; default `serverless.yml` in the working directory. */
  file?: string;
  /** `--stage` (also `${opt:stage}` / `${sls:stage}`). */
  stage?: string;
  /** `--region`. */
  region?: string;
  /** Any other CLI options `${opt:...}` may read. */
  options?: Record<string, string>;
  /** Environment for `${env:...}`; default process.env. */
  env?: Record<string, string | undefined>;
}

/** A function's `stream` event, in the emulator's terms, plus what the local runtime needs to run it. */
export interface StreamFunctionSettings {
  /** The key under `functions:`. */
  key: string;
  /** The deployed name: `<service>-<stage>-<key>` unless `name:` says otherwise. */
  functionName: string;
  /** `handler:` as written, e.g. `src/handlers/archive-ttl.handler`. */
  handler: string;
  /** Absolute module path without extension, e.g. `/repo/src/handlers/archive-ttl`. */
  handlerModule: string;
  /** The exported function's name, e.g. `handler`. */
  handlerExport: string;
  timeoutSeconds: number;
  memorySize: number;
  /** Resolved function + provider environment (CloudFormation intrinsics left as objects). */
  environment: Record<string, unknown>;
  stream: StreamEventSettings;
}

export interface StreamEventSettings {
  /** The `arn:` value (often a CloudFormation intrinsic). */
  arn: unknown;
  enabled: boolean;
  startingPosition: 'TRIM_HORIZON' | 'LATEST' | 'AT_TIMESTAMP';
  startingPositionTimestamp?: number;
  batchSize?: number;
  maximumBatchingWindowInSeconds?: number;
  filterPatterns?: FilterPattern[];
  reportBatchItemFailures: boolean;
  bisectBatchOnFunctionError: boolean;
  maximumRetryAttempts?: number;
  maximumRecordAgeInSeconds?: number;
  parallelizationFactor?: number;
  tumblingWindowInSeconds?: number;
  /** destinations.onFailure: the ARN (or intrinsic) and type (`sqs` / `sns` / `s3`). */
  onFailure?: { arn: unknown; type?: string };
}

// serverless v3's schema for `stream` events; anything else is a typo.
const STREAM_KEYS = [
  'arn',
  'type',
  'batchSize',
  'batchWindow',
  'parallelizationFactor',
  'startingPosition',
  'startingPositionTimestamp',
  'enabled',
  'consumer',
  'bisectBatchOnFunctionError',
  'maximumRetryAttempts',
  'maximumRecordAgeInSeconds',
  'functionResponseType',
  'destinations',
  'tumblingWindowInSeconds',
  'filterPatterns',
] as const;

/** The account id in ARNs the local runtime makes up. */
const LOCAL_ACCOUNT_ID = '000000000000';

const CFN_TAGS = [
  'Ref',
  'GetAtt',
  'Sub',
  'Join',
  'Select',
  'Split',
  'If',
  'Equals',
  'Not',
  'And',
  'Or',
  'FindInMap',
  'ImportValue',
  'GetAZs',
  'Base64',
  'Cidr',
  'Condition',
];

/** js-yaml schema that reads CloudFormation short-form tags (`!Ref X`) as their long form. */
const CFN_SCHEMA = yaml.DEFAULT_SCHEMA.extend(
  CFN_TAGS.flatMap((tag) => {
    const key = tag === 'Ref' || tag === 'Condition' ? tag : `Fn::${tag}`;
    return (['scalar', 'sequence', 'mapping'] as const).map(
      (kind) =>
        new yaml.Type(`!${tag}`, {
          kind,
          construct: (data: unknown) => ({
            [key]: tag === 'GetAtt' && typeof data === 'string' ? data.split('.') : data,
          }),
        }),
    );
  }),
);

/**
 * Parses serverless.yml text as serverless does (CloudFormation short tags read as their long
 * form), without resolving variables. Throws js-yaml's error for text that is not YAML.
 */
export function parseServerlessYaml(text: string, filename?: string): unknown {
  return yaml.load(text, { schema: CFN_SCHEMA, ...(filename ? { filename } : {}) });
}

const VARIABLE = /\$\{([^${}]+)\}/g;

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

/**
 * serverless.yml as serverless v3 would resolve it, for the variable forms a v3 file commonly
 * uses: ${self:…}, ${opt:…}, ${sls:stage}, ${env:…}, ${file(…)} / ${file(…):address} on YAML,
 * JSON and JS files, ${strToBool(…)}, comma fallbacks and nested variables. Values are resolved
 * on demand, so resources the local runtime does not need are never touched.
 */
export class ServerlessConfig {
  private readonly fileCache = new Map<string, Promise<unknown>>();
  private readonly selfCache = new Map<string, Promise<unknown>>();
  private readonly env: Record<string, string | undefined>;
  private readonly cliOptions: Record<string, string>;

  private constructor(
    readonly file: string,
    private readonly raw: Record<string, unknown>,
    options: ServerlessConfigOptions,
  ) {
    this.env = options.env ?? process.env;
    this.cliOptions = {
      ...options.options,
      ...(options.stage ? { stage: options.stage } : {}),
      ...(options.region ? { region: options.region } : {}),
    };
  }

  static async load(options: ServerlessConfigOptions = {}): Promise<ServerlessConfig> {
    assertOptions(options, ['file', 'stage', 'region', 'options', 'env'], 'loadServerlessConfig');
    const file = resolve(options.file ?? 'serverless.yml');
    let text: string;
    try {
      text = await readFile(file, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
        throw new ServerlessConfigError(
          file,
          "cannot read: no such file. Run tidewater in your service's folder (where serverless.yml is), pass " +
            'the file with -c, or scaffold one with `npx tidewater init`',
        );
      }
      throw new ServerlessConfigError(file, `cannot read: ${(error as Error).message}`);
    }
    let raw: unknown;
    try {
      raw = yaml.load(text, { schema: CFN_SCHEMA, filename: file });
    } catch (error) {
      throw new ServerlessConfigError(file, `not valid YAML: ${(error as Error).message}`);
    }
    if (raw === null || typeof raw !== 'object' || Array.isArray(raw))
      throw new ServerlessConfigError(file, 'is not a YAML mapping');
    return new ServerlessConfig(file, raw as Record<string, unknown>, options);
  }

  /** The resolved value at a dotted path (`custom.tidewater.batchSize`), like `${self:…}`. */
  get(path: string): Promise<unknown> {
    let cached = this.selfCache.get(path);
    if (!cached) {
      cached = this.lookupSelf(path);
      this.selfCache.set(path, cached);
    }
    return cached;
  }

  async stage(): Promise<string> {
    if (this.cliOptions.stage) return this.cliOptions.stage;
    const stage = await this.get('provider.stage');
    return typeof stage === 'string' && stage ? stage : 'dev';
  }

  /** `--region`, else provider.region, else us-east-1 (serverless v3's default). */
  async region(): Promise<string> {
    if (this.cliOptions.region) return this.cliOptions.region;
    const region = await this.get('provider.region');
    return typeof region === 'string' && region ? region : 'us-east-1';
  }

  /** The service's name (`service:`, or `service.name` in the older object form). */
  async service(): Promise<string> {
    const service = await this.get('service');
    const name =
      typeof service === 'object' && service !== null ? (service as { name?: unknown }).name : service;
    if (typeof name !== 'string' || !name)
      throw new ServerlessConfigError(this.file, 'has no `service:` name');
    return name;
  }

  /** The folder serverless.yml is in: handler paths and `${file(…)}` are relative to it. */
  get root(): string {
    return dirname(this.file);
  }

  /**
   * provider.environment with the function's environment over it, as Lambda gets them
   * (serverless variables resolved; CloudFormation intrinsics left as objects).
   */
  async environmentOf(key: string): Promise<Record<string, unknown>> {
    if ((await this.get(`functions.${key}`)) === undefined)
      throw new ServerlessConfigError(this.file, `no function '${key}' under functions:`);
    const providerEnv = await this.get('provider.environment');
    const fnEnv = await this.get(`functions.${key}.environment`);
    for (const [where, env] of [
      ['provider.environment', providerEnv],
      [`functions.${key}.environment`, fnEnv],
    ] as const) {
      if (env !== undefined && (env === null || typeof env !== 'object' || Array.isArray(env)))
        throw new ServerlessConfigError(this.file, `${where} must be a mapping`);
    }
    return { ...(providerEnv as object | undefined), ...(fnEnv as object | undefined) };
  }

  async functionKeys(): Promise<string[]> {
    const functions = this.raw.functions;
    return functions && typeof functions === 'object' ? Object.keys(functions) : [];
  }

  /** Every function with a DynamoDB stream event, with that event's settings. */
  async streamFunctions(): Promise<StreamFunctionSettings[]> {
    const out: StreamFunctionSettings[] = [];
    for (const key of await this.functionKeys()) {
      const settings = await this.streamFunction(key);
      if (settings) out.push(settings);
    }
    return out;
  }

  /** One function's DynamoDB stream settings; undefined when it has no DynamoDB stream event. */
  async streamFunction(key: string): Promise<StreamFunctionSettings | undefined> {
    const fn = await this.get(`functions.${key}`);
    if (fn === undefined) throw new ServerlessConfigError(this.file, `no function '${key}' under functions:`);
    const events = await this.get(`functions.${key}.events`);
    if (!Array.isArray(events)) return undefined;
    let stream: StreamEventSettings | undefined;
    for (const event of events) {
      const raw = (event as { stream?: unknown })?.stream;
      if (raw === undefined) continue;
      const parsed = this.parseStream(key, raw);
      if (parsed) {
        if (stream)
          throw new ServerlessConfigError(
            this.file,
            `function '${key}' has more than one DynamoDB stream event; run them one at a time`,
          );
        stream = parsed;
      }
    }
    if (!stream) return undefined;
    const handler = await this.get(`functions.${key}.handler`);
    if (typeof handler !== 'string' || !handler.includes('.')) {
      throw new ServerlessConfigError(
        this.file,
        `function '${key}': handler must look like path/to/file.exportName`,
      );
    }
    const dot = handler.lastIndexOf('.');
    const service = await this.get('service');
    const name = await this.get(`functions.${key}.name`);
    const timeout = (await this.get(`functions.${key}.timeout`)) ?? (await this.get('provider.timeout')) ?? 6;
    const memory =
      (await this.get(`functions.${key}.memorySize`)) ?? (await this.get('provider.memorySize')) ?? 1024;
    const environment = await this.environmentOf(key);
    return {
      key,
      functionName: typeof name === 'string' ? name : `${String(service)}-${await this.stage()}-${key}`,
      handler,
      handlerModule: resolve(dirname(this.file), handler.slice(0, dot)),
      handlerExport: handler.slice(dot + 1),
      timeoutSeconds: toNumber(timeout, `functions.${key}.timeout`, this.file),
      memorySize: toNumber(memory, `functions.${key}.memorySize`, this.file),
      environment,
      stream,
    };
  }

  private parseStream(key: string, raw: unknown): StreamEventSettings | undefined {
    const where = `functions.${key}.events[].stream`;
    if (typeof raw === 'string') {
      return raw.includes(':dynamodb:')
        ? {
            arn: raw,
            enabled: true,
            startingPosition: 'TRIM_HORIZON',
            reportBatchItemFailures: false,
            bisectBatchOnFunctionError: false,
          }
        : undefined;
    }
    if (raw === null || typeof raw !== 'object')
      throw new ServerlessConfigError(this.file, `${where} must be an ARN or a mapping`);
    const s = raw as Record<string, unknown>;
    const unknown = Object.keys(s).filter((k) => !(STREAM_KEYS as readonly string[]).includes(k));
    if (unknown.length)
      throw new ServerlessConfigError(
        this.file,
        `${where}: unknown key(s) ${unknown.join(', ')} (known: ${STREAM_KEYS.join(', ')})`,
      );
    const arn = s.arn;
    const isDynamo =
      s.type === 'dynamodb' ||
      (s.type === undefined &&
        (typeof arn === 'string'
          ? arn.includes(':dynamodb:')
          : JSON.stringify(arn ?? '').includes('StreamArn')));
    if (!isDynamo) return undefined;
    const num = (name: string) =>
      s[name] === undefined ? undefined : toNumber(s[name], `${where}.${name}`, this.file);
    const destinations = s.destinations as { onFailure?: unknown } | undefined;
    const onFailure = destinations?.onFailure;
    const out: StreamEventSettings = {
      arn,
      enabled: s.enabled === undefined ? true : toBoolean(s.enabled, `${where}.enabled`, this.file),
      startingPosition: (s.startingPosition as StreamEventSettings['startingPosition']) ?? 'TRIM_HORIZON',
      reportBatchItemFailures: s.functionResponseType === 'ReportBatchItemFailures',
      bisectBatchOnFunctionError:
        s.bisectBatchOnFunctionError === undefined
          ? false
          : toBoolean(s.bisectBatchOnFunctionError, `${where}.bisectBatchOnFunctionError`, this.file),
    };
    if (!['TRIM_HORIZON', 'LATEST', 'AT_TIMESTAMP'].includes(out.startingPosition)) {
      throw new ServerlessConfigError(
        this.file,
        `${where}.startingPosition must be TRIM_HORIZON, LATEST or AT_TIMESTAMP`,
      );
    }
    const fields: Array<[keyof StreamEventSettings, string]> = [
      ['batchSize', 'batchSize'],
      ['maximumBatchingWindowInSeconds', 'batchWindow'],
      ['maximumRetryAttempts', 'maximumRetryAttempts'],
      ['maximumRecordAgeInSeconds', 'maximumRecordAgeInSeconds'],
      ['parallelizationFactor', 'parallelizationFactor'],
      ['tumblingWindowInSeconds', 'tumblingWindowInSeconds'],
      ['startingPositionTimestamp', 'startingPositionTimestamp'],
    ];
    for (const [to, from] of fields) {
      const value = num(from);
      if (value !== undefined) (out as unknown as Record<string, unknown>)[to] = value;
    }
    if (s.filterPatterns !== undefined) {
      if (!Array.isArray(s.filterPatterns))
        throw new ServerlessConfigError(this.file, `${where}.filterPatterns must be a list`);
      out.filterPatterns = s.filterPatterns as FilterPattern[];
    }
    if (onFailure !== undefined) {
      const target = onFailure as { arn?: unknown; type?: unknown } | null;
      out.onFailure =
        target !== null && typeof target === 'object' && 'arn' in target
          ? { arn: target.arn, ...(typeof target.type === 'string' ? { type: target.type } : {}) }
          : { arn: onFailure };
    }
    return out;
  }

  private async lookupSelf(path: string): Promise<unknown> {
    if (path === '') return this.resolveDeep(this.raw);
    const parts = path.split('.');
    let current: unknown = this.raw;
    for (const part of parts) {
      current = await this.resolveValue(current);
      if (current === null || typeof current !== 'object') return undefined;
      current = (current as Record<string, unknown>)[part];
      if (current === undefined) return undefined;
    }
    return this.resolveDeep(current);
  }

  private async resolveDeep(value: unknown): Promise<unknown> {
    const resolved = await this.resolveValue(value);
    if (Array.isArray(resolved)) return Promise.all(resolved.map((v) => this.resolveDeep(v)));
    if (resolved !== null && typeof resolved === 'object') {
      const out: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(resolved)) out[k] = await this.resolveDeep(v);
      return out;
    }
    return resolved;
  }

  /** Resolves the variables of one value (not of its children). */
  private async resolveValue(value: unknown): Promise<unknown> {
    let current = value;
    for (let depth = 0; typeof current === 'string'; depth++) {
      const text: string = current;
      const match = firstVariable(text);
      if (!match) break;
      if (depth > 50)
        throw new ServerlessConfigError(
          this.file,
          `variables nest too deeply (a cycle?) in ${JSON.stringify(value)}`,
        );
      const resolved = await this.resolveExpression(match[1] as string, text);
      if (match[0] === text) {
        current = resolved;
      } else {
        if (resolved !== null && typeof resolved === 'object') {
          throw new ServerlessConfigError(
            this.file,
            `\${${match[1]}} resolves to an object but is embedded in the string ${JSON.stringify(text)}`,
          );
        }
        current = text.slice(0, match.index) + String(resolved) + text.slice(match.index + match[0].length);
      }
    }
    return current;
  }

  private async resolveExpression(expression: string, context: string): Promise<unknown> {
    const parts = splitTopLevel(expression);
    for (const part of parts) {
      const value = await this.resolveSource(part.trim(), context);
      if (value !== undefined && value !== null) return value;
    }
    throw new ServerlessConfigError(
      this.file,
      `cannot resolve \${${expression}} (in ${JSON.stringify(context)}): no value and no fallback`,
    );
  }

  private async resolveSource(source: string, context: string): Promise<unknown> {
    const literal = literalSource(source);
    if (literal) return literal.value;
    if (source === 'null') return null;
    if (source.startsWith('self:')) return this.get(source.slice(5));
    if (source.startsWith('opt:')) return this.cliOptions[source.slice(4)];
    if (source.startsWith('env:')) {
      const value = this.env[source.slice(4)];
      return value === '' ? undefined : value;
    }
    if (source === 'sls:stage') return this.stage();
    if (source === 'sls:instanceId') return 'local';
    if (source === 'aws:region') return this.region();
    // The account the local servers' ARNs use; on AWS it is the deploying account's.
    if (source === 'aws:accountId') return LOCAL_ACCOUNT_ID;
    const fn = /^(\w+)\((.*)\)(?::(.*))?$/s.exec(source);
    if (fn) {
      const [, name, argument = '', address] = fn;
      if (name === 'file') return this.fromFile(argument.trim(), address?.trim());
      if (name === 'strToBool') {
        const value = strToBool(argument);
        if (value === undefined)
          throw new ServerlessConfigError(
            this.file,
            `strToBool(${argument.trim()}) in ${JSON.stringify(context)}: expected true, false, 1 or 0`,
          );
        return value;
      }
      throw new ServerlessConfigError(
        this.file,
        `unsupported variable function ${name}() in ${JSON.stringify(context)}`,
      );
    }
    throw new ServerlessConfigError(
      this.file,
      `unsupported variable source '${source}' in ${JSON.stringify(context)}`,
    );
  }

  private async fromFile(path: string, address: string | undefined): Promise<unknown> {
    const target = resolve(dirname(this.file), path.replace(/^(['"])(.*)\1$/s, '$2'));
    let loaded = this.fileCache.get(target);
    if (!loaded) {
      loaded = this.loadFile(target);
      this.fileCache.set(target, loaded);
    }
    let value = await loaded;
    if (value === undefined) return undefined;
    if (!address) return value;
    for (const part of address.split('.')) {
      value = await this.resolveValue(value);
      if (value === null || typeof value !== 'object') return undefined;
      value = (value as Record<string, unknown>)[part];
      // A JS file may export functions per address; serverless calls them.
      if (typeof value === 'function') value = await (value as (arg: unknown) => unknown)(this.jsArgument());
    }
    return value;
  }

  private async loadFile(target: string): Promise<unknown> {
    if (!existsSync(target)) return undefined;
    const ext = extname(target).toLowerCase();
    try {
      if (ext === '.js' || ext === '.cjs') {
        const require = createRequire(this.file);
        let exported: unknown = await require(target);
        if (typeof exported === 'function')
          exported = await (exported as (arg: unknown) => unknown)(this.jsArgument());
        return exported;
      }
      const text = await readFile(target, 'utf8');
      if (ext === '.json') return JSON.parse(text);
      return yaml.load(text, { schema: CFN_SCHEMA, filename: target });
    } catch (error) {
      throw new ServerlessConfigError(this.file, `cannot load ${target}: ${(error as Error).message}`);
    }
  }

  private jsArgument() {
    return {
      options: this.cliOptions,
      resolveVariable: (expression: string) => this.resolveExpression(expression, `\${${expression}}`),
      resolveConfigurationProperty: (path: string[]) => this.get(path.join('.')),
    };
  }
}

/** Reads serverless.yml (see ServerlessConfig). */
export function loadServerlessConfig(options?: ServerlessConfigOptions): Promise<ServerlessConfig> {
  return ServerlessConfig.load(options);
}

/**
 * The emulator options a function's stream event means. The on-failure destination is left to
 * the caller (it needs a client for the queue / bucket the ARN names).
 */
export function toEmulatorOptions(
  settings: StreamFunctionSettings,
  options: { region?: string; accountId?: string } = {},
): Omit<EventSourceMappingOptions, 'handler'> {
  const s = settings.stream;
  return {
    functionName: settings.functionName,
    timeoutSeconds: settings.timeoutSeconds,
    memorySize: settings.memorySize,
    ...(options.region ? { region: options.region } : {}),
    ...(options.accountId ? { accountId: options.accountId } : {}),
    ...(s.batchSize !== undefined ? { batchSize: s.batchSize } : {}),
    ...(s.maximumBatchingWindowInSeconds !== undefined
      ? { maximumBatchingWindowInSeconds: s.maximumBatchingWindowInSeconds }
      : {}),
    ...(s.filterPatterns ? { filterPatterns: s.filterPatterns } : {}),
    reportBatchItemFailures: s.reportBatchItemFailures,
    bisectBatchOnFunctionError: s.bisectBatchOnFunctionError,
    ...(s.maximumRetryAttempts !== undefined ? { maximumRetryAttempts: s.maximumRetryAttempts } : {}),
    ...(s.maximumRecordAgeInSeconds !== undefined
      ? { maximumRecordAgeInSeconds: s.maximumRecordAgeInSeconds }
      : {}),
    ...(s.parallelizationFactor !== undefined ? { parallelizationFactor: s.parallelizationFactor } : {}),
  };
}

/**
 * The handler's file: the first of .ts, .mts, .js, .mjs, .cjs that exists next to handlerModule;
 * failing that, given the project root, its built copy under `<root>/dist` (a package that ships
 * dist/ but not src/, like tidewater's own demo service).
 */
export function handlerFile(
  settings: Pick<StreamFunctionSettings, 'handler' | 'handlerModule'>,
  options: { root?: string } = {},
): string {
  for (const ext of ['.ts', '.mts', '.js', '.mjs', '.cjs']) {
    const candidate = `${settings.handlerModule}${ext}`;
    if (existsSync(candidate)) return candidate;
  }
  const built = options.root ? builtPathOf(`${settings.handlerModule}.ts`, options.root) : undefined;
  if (built) {
    for (const candidate of [built, built.replace(/\.js$/, '.mjs')])
      if (existsSync(candidate)) return candidate;
  }
  throw new ServerlessConfigError(
    settings.handlerModule,
    `no handler file for '${settings.handler}' (.ts, .mts, .js, .mjs or .cjs)`,
  );
}

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

function toNumber(value: unknown, name: string, file: string): number {
  const n =
    typeof value === 'number'
      ? value
      : typeof value === 'string' && value.trim() !== ''
        ? Number(value)
        : Number.NaN;
  if (!Number.isFinite(n))
    throw new ServerlessConfigError(file, `${name} must be a number, got ${JSON.stringify(value)}`);
  return n;
}

/**
 * A boolean setting read the way ${strToBool(…)} reads text, so 'TRUE' or 1 work as they would
 * through a variable; anything else is an error, because reading a typo ('ture', 'yes') as false
 * would silently turn a mapping or its bisecting off.
 */
function toBoolean(value: unknown, name: string, file: string): boolean {
  if (typeof value === 'boolean') return value;
  const parsed =
    typeof value === 'string' || typeof value === 'number' ? strToBool(String(value)) : undefined;
  if (parsed === undefined)
    throw new ServerlessConfigError(
      file,
      `${name} must be true, false, 1 or 0, got ${JSON.stringify(value)}`,
    );
  return parsed;
}
