import { readFile, stat } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { defineOptions } from '../../core/index.js';
import { ServerlessConfigError } from './errors.js';
import { checkBoundedFile } from './json.js';
import { projectRoot, resolveModuleInside } from './paths.js';
import {
  parseStreamEvent,
  type StreamEventSettings,
  type StreamFunctionSettings,
  toNumber,
} from './stream-function.js';
import { resolveAsync, VariableResolver } from './variables.js';
import { MAX_YAML_LENGTH, parseServerlessYaml } from './yaml.js';

/** Options of loadServerlessConfig: the file, stage, region and variables' sources. */
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

const readOptions = defineOptions<ServerlessConfigOptions>()('loadServerlessConfig', {
  file: { kind: 'nonEmptyString', default: 'serverless.yml' },
  stage: { kind: 'nonEmptyString' },
  region: { kind: 'nonEmptyString' },
  options: { kind: 'object' },
  env: { kind: 'object' },
});

/**
 * serverless.yml as serverless v3 would resolve it (see VariableResolver for the variable forms).
 * Values are resolved on demand, so resources the local runtime does not need are never touched.
 */
export class ServerlessConfig {
  private readonly cache = new Map<string, Promise<unknown>>();
  private readonly variables: VariableResolver;

  private constructor(
    readonly file: string,
    private readonly raw: Record<string, unknown>,
    options: ServerlessConfigOptions,
  ) {
    this.variables = new VariableResolver({
      document: raw,
      file,
      options: {
        ...options.options,
        ...(options.stage ? { stage: options.stage } : {}),
        ...(options.region ? { region: options.region } : {}),
      },
      env: options.env ?? process.env,
      fail: (message) => new ServerlessConfigError(file, message),
    });
  }

  static async load(input: ServerlessConfigOptions = {}): Promise<ServerlessConfig> {
    const options = readOptions(input);
    const file = resolve(options.file);
    let text: string;
    try {
      // Refused before it is read: a file past the parser's limit would be held whole first.
      checkBoundedFile(await stat(file), MAX_YAML_LENGTH * 4);
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
      raw = parseServerlessYaml(text, file);
    } catch (error) {
      throw new ServerlessConfigError(file, `not valid YAML: ${(error as Error).message}`);
    }
    if (raw === null || typeof raw !== 'object' || Array.isArray(raw))
      throw new ServerlessConfigError(file, 'is not a YAML mapping');
    return new ServerlessConfig(file, raw as Record<string, unknown>, options);
  }

  /** The resolved value at a dotted path (`custom.tidewater.batchSize`), like `${self:…}`. */
  get(path: string): Promise<unknown> {
    let cached = this.cache.get(path);
    if (!cached) {
      cached = resolveAsync(this.variables.get(path));
      this.cache.set(path, cached);
    }
    return cached;
  }

  /** `--stage`, else provider.stage, else dev (serverless v3's default). */
  stage(): Promise<string> {
    return resolveAsync(this.variables.stage());
  }

  /** `--region`, else provider.region, else us-east-1 (serverless v3's default). */
  region(): Promise<string> {
    return resolveAsync(this.variables.region());
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
    await this.functionOf(key);
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

  /** Every function with a DynamoDB or Kinesis stream event, with that event's settings. */
  async streamFunctions(): Promise<StreamFunctionSettings[]> {
    const out: StreamFunctionSettings[] = [];
    for (const key of await this.functionKeys()) {
      const settings = await this.streamFunction(key);
      if (settings) out.push(settings);
    }
    return out;
  }

  /** The functions with an event of this type (`schedule`, `http`, `stream`…), by key. */
  async functionsWithEvent(type: string): Promise<string[]> {
    const out: string[] = [];
    for (const key of await this.functionKeys()) {
      const events = await this.get(`functions.${key}.events`);
      if (
        Array.isArray(events) &&
        events.some((event) => (event as Record<string, unknown>)?.[type] !== undefined)
      )
        out.push(key);
    }
    return out;
  }

  /** One function's stream settings; undefined when it has no DynamoDB or Kinesis stream event. */
  async streamFunction(key: string): Promise<StreamFunctionSettings | undefined> {
    await this.functionOf(key);
    const events = await this.get(`functions.${key}.events`);
    if (!Array.isArray(events)) return undefined;
    let stream: StreamEventSettings | undefined;
    for (const event of events) {
      const raw = (event as { stream?: unknown })?.stream;
      if (raw === undefined) continue;
      const parsed = parseStreamEvent(key, raw, this.file);
      if (parsed) {
        if (stream)
          throw new ServerlessConfigError(
            this.file,
            `function '${key}' has more than one stream event; run them one at a time`,
          );
        stream = parsed;
      }
    }
    if (!stream) return undefined;
    return { ...(await this.functionSettings(key)), stream };
  }

  /**
   * What Lambda runs for a function: its deployed name (`<service>-<stage>-<key>` unless `name:`
   * says otherwise), handler, timeout, memory and environment.
   */
  async functionSettings(key: string): Promise<Omit<StreamFunctionSettings, 'stream'>> {
    await this.functionOf(key);
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
    return {
      key,
      functionName: typeof name === 'string' ? name : `${String(service)}-${await this.stage()}-${key}`,
      handler,
      // Inside the service's project: a handler elsewhere on the machine is not the service's code.
      handlerModule: resolveModuleInside(
        projectRoot(this.root),
        handler.slice(0, dot),
        (detail) => new ServerlessConfigError(this.file, `functions.${key}.handler: ${detail}`),
        this.root,
      ),
      handlerExport: handler.slice(dot + 1),
      timeoutSeconds: toNumber(timeout, `functions.${key}.timeout`, this.file),
      memorySize: toNumber(memory, `functions.${key}.memorySize`, this.file),
      environment: await this.environmentOf(key),
    };
  }

  private async functionOf(key: string): Promise<unknown> {
    const fn = await this.get(`functions.${key}`);
    if (fn === undefined) throw new ServerlessConfigError(this.file, `no function '${key}' under functions:`);
    return fn;
  }
}

/** Reads serverless.yml (see ServerlessConfig). */
export function loadServerlessConfig(options?: ServerlessConfigOptions): Promise<ServerlessConfig> {
  return ServerlessConfig.load(options);
}
