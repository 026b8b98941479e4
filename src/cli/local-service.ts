import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeFileAtomic } from '../core/write-file-atomic.js';
import { resolveEnvironment } from '../local/config/service-resources.js';
import { aborted } from '../local/emulator/poller.js';
import {
  type EmulatorEvent,
  EventSourceMappingEmulator,
  type FailureDestination,
  handlerFile,
  KinesisBridge,
  KinesisMappingEmulator,
  KinesisShardReader,
  type KinesisStreamHandler,
  type LocalApp,
  type LocalQueue,
  loadHandler,
  loadLocalApp,
  type ServiceResources,
  type StreamFunctionSettings,
  type StreamHandler,
  StreamPoller,
  toEmulatorOptions,
} from '../local/index.js';
import { overlayEnv } from '../local/servers/process-env.js';
import { batchInfoOf } from '../records/on-failure-record.js';
import { describeEvent } from './describe-event.js';
import { namedStreamFunctions } from './function-env.js';
import { onFailureDestination, type ServerEndpoints, type Servers, startServers } from './local-servers.js';

/**
 * `tidewater start` in a service: the local servers, the resources its serverless.yml declares,
 * and every function with a DynamoDB stream event fed by its table's stream the way Lambda's event
 * source mapping would feed it, until stopped.
 */
export interface LocalServiceOptions {
  /** The service's serverless.yml (unless a template or a cdk.out is given). */
  config?: string;
  /** A SAM template instead of serverless.yml. */
  template?: string;
  /** A CDK app's cdk.out instead of serverless.yml. */
  cdkOut?: string;
  stage: string;
  /** Run only these functions (keys under `functions:`); default every stream function. */
  functions?: readonly string[];
  /** Deliver what the streams hold, then stop. */
  once?: boolean;
  /** Stop after this many seconds. */
  forSeconds?: number;
  /** Stops the run (SIGINT / SIGTERM in the CLI). */
  signal?: AbortSignal;
  /** Servers already running (Docker, a test's); each one not given is started here. */
  endpoints?: ServerEndpoints;
  /** Write the environment that reaches the local servers here (KEY=value lines) once ready. */
  envFile?: string;
  /**
   * Print each function's environment values, not only the names: a secret in a variable would
   * land in the terminal and CI logs, so only when asked (`--show-env-values`).
   */
  showEnvValues?: boolean;
  verbose?: boolean;
  /** tidewater's own lines (the functions' output goes to stdout, as in Lambda). */
  log: (line: string) => void;
}

export interface LocalServiceResult {
  /** The functions that ran. */
  functions: string[];
  invocations: number;
  /** Records handed to an on-failure destination (or dropped, without one): Lambda would have lost them. */
  discarded: number;
}

/** A stream function ready to run: its stream on the local server, its handler loaded. */
export interface RunningFunction {
  fn: StreamFunctionSettings;
  streamArn: string;
  environment: Record<string, string>;
  handler: StreamHandler;
  onFailure?: FailureDestination;
  /** The on-failure destination's queue, when it is one of the app's queues. */
  onFailureQueue?: LocalQueue;
  onFailureNote: string;
}

/**
 * What a handler run against the servers gets over its own environment, and what `--write-env`
 * writes: the endpoint of every server that runs (Kinesis only when it was started).
 */
export function serverEnvironment(
  servers: Pick<Servers, 'sqsEndpoint' | 'kinesis'> & { aws: Pick<Servers['aws'], 'env'> },
): Record<string, string> {
  return {
    ...servers.aws.env,
    AWS_ENDPOINT_URL_SQS: servers.sqsEndpoint,
    ...(servers.kinesis ? { AWS_ENDPOINT_URL_KINESIS: servers.kinesis.endpoint } : {}),
  };
}

export async function runLocalService(options: LocalServiceOptions): Promise<LocalServiceResult> {
  const { log } = options;
  // Everything that can be wrong in serverless.yml or the template is found before a server starts.
  const app = await loadLocalApp({
    ...(options.config !== undefined ? { config: options.config } : {}),
    ...(options.template !== undefined ? { template: options.template } : {}),
    ...(options.cdkOut !== undefined ? { cdkOut: options.cdkOut } : {}),
    stage: options.stage,
  });
  const { root } = app;
  const plan = await app.plan();
  const streamFunctions = options.functions
    ? await namedStreamFunctions(app, options.functions)
    : await app.streamFunctions();
  for (const fn of streamFunctions) handlerFile(fn, { root });

  log(`${app.name} (stage ${app.stage}) from ${app.file}`);
  // The Kinesis server only for an app with a Kinesis stream: others start as before.
  const servers = await startServers(options.endpoints ?? {}, { kinesis: plan.kinesisStreams.length > 0 });
  const checkpoints = await mkdtemp(join(tmpdir(), 'tidewater-start-'));
  const stop = new AbortController();
  const onAbort = () => stop.abort();
  options.signal?.addEventListener('abort', onAbort, { once: true });
  const timer =
    options.forSeconds !== undefined ? setTimeout(() => stop.abort(), options.forSeconds * 1000) : undefined;
  let restoreEnv: () => void = () => undefined;
  const stats = { invocations: 0, discarded: 0 };
  try {
    const { aws } = servers;
    const localEnv = serverEnvironment(servers);
    log(`  DynamoDB  ${aws.dynamoEndpoint}${options.endpoints?.dynamodb ? ' (given)' : ' (DynamoDB Local)'}`);
    log(`  S3        ${aws.s3Endpoint}${options.endpoints?.s3 ? ' (given)' : ''}`);
    log(`  SQS       ${servers.sqsEndpoint}${options.endpoints?.sqs ? ' (given)' : ''}`);
    if (servers.kinesis) log(`  Kinesis   ${servers.kinesis.endpoint} (kinesalite)`);

    const resources = await app.createResources({
      dynamodb: aws.dynamodb,
      s3: aws.s3,
      sqs: servers.sqs,
      ...(servers.kinesis ? { kinesis: servers.kinesis.client } : {}),
    });
    describeResources(
      resources,
      plan.tables.length + plan.buckets.length + plan.queues.length + plan.kinesisStreams.length,
      app.declaredIn,
      log,
    );

    const running: RunningFunction[] = [];
    for (const fn of streamFunctions) {
      const prepared = await prepareFunction(fn, resources, localEnv, servers, app, log, {
        ...(options.showEnvValues ? { showEnvValues: true } : {}),
      });
      if (prepared) running.push(prepared);
    }
    // One process runs every function: each handler was imported with its own environment (what
    // it reads at cold start is exact); while they run, process.env holds all of them.
    const runtimeEnv: Record<string, string> = {};
    for (const { fn, environment } of running) {
      for (const [name, value] of Object.entries(environment)) {
        if (name in runtimeEnv && runtimeEnv[name] !== value && !(name in localEnv))
          log(`warning: ${name} differs between functions; code reading it per invocation sees ${fn.key}'s`);
        runtimeEnv[name] = value;
      }
    }
    restoreEnv = overlayEnv({ ...runtimeEnv, ...localEnv });

    log('environment for your own scripts and tools (the same servers):');
    for (const [name, value] of Object.entries(localEnv)) log(`  export ${name}=${value}`);
    if (options.envFile) {
      // Whole or not at all: a script waiting for the file never reads half of it.
      await writeFileAtomic(
        options.envFile,
        Object.entries(localEnv)
          .map(([name, value]) => `${name}=${value}\n`)
          .join(''),
      );
    }
    if (running.length === 0) log('no function with a DynamoDB or Kinesis stream event to run');

    const bridges = kinesisBridges(resources, servers, checkpoints, log);
    if (options.once) {
      // Each table's changes are in its Kinesis stream before the Kinesis functions read it.
      for (const bridge of bridges) await bridge.run({ signal: stop.signal, stopWhenCaughtUp: true });
    }
    const forwarding = options.once ? [] : bridges.map((bridge) => bridge.run({ signal: stop.signal }));
    const pollers = running.map((fn) =>
      runFunction(fn, servers, {
        checkpointFile: join(checkpoints, `${fn.fn.key}.json`),
        signal: stop.signal,
        ...(options.once ? { once: true } : {}),
        ...(options.verbose ? { verbose: true } : {}),
        log,
        stats,
      }),
    );
    log(
      options.once
        ? 'delivering what the streams hold, then stopping'
        : options.forSeconds !== undefined
          ? `running for ${options.forSeconds} s`
          : 'running; Ctrl-C to stop',
    );
    const settled = await Promise.allSettled(
      [...forwarding, ...pollers].map((p) =>
        p.catch((error: unknown) => {
          // One mapping failing stops the others: a local run that silently lost a function
          // would look healthy.
          stop.abort();
          throw error;
        }),
      ),
    );
    const failed = settled.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed) throw failed.reason;
    // The servers stay up for the user's own scripts until stopped, even with no function to run.
    if (!options.once) await aborted(stop.signal);
    log(
      `stopped: ${stats.invocations} invocation${stats.invocations === 1 ? '' : 's'}, ` +
        `${stats.discarded} record${stats.discarded === 1 ? '' : 's'} discarded`,
    );
    return { functions: running.map((r) => r.fn.key), ...stats };
  } finally {
    if (timer) clearTimeout(timer);
    stop.abort();
    options.signal?.removeEventListener('abort', onAbort);
    restoreEnv();
    await Promise.all([servers.stop(), rm(checkpoints, { recursive: true, force: true })]);
  }
}

function describeResources(
  resources: ServiceResources,
  declared: number,
  declaredIn: string,
  log: (line: string) => void,
) {
  if (declared === 0) {
    log(`resources: ${declaredIn} declares no table, bucket or queue`);
  } else {
    log(`resources (${declaredIn}):`);
    for (const table of resources.tables) {
      const details = [
        table.streamArn ? 'stream' : 'no stream',
        ...(table.kinesisDestination ? ['Kinesis streaming destination'] : []),
        ...(table.ttlAttribute ? [`TTL on ${table.ttlAttribute}`] : []),
      ];
      log(`  ${table.logicalId.padEnd(24)} table  ${table.name} (${details.join(', ')})`);
    }
    for (const bucket of resources.buckets) log(`  ${bucket.logicalId.padEnd(24)} bucket ${bucket.name}`);
    for (const stream of resources.kinesisStreams)
      log(`  ${stream.logicalId.padEnd(24)} Kinesis stream ${stream.name}`);
    for (const queue of resources.queues) log(`  ${queue.logicalId.padEnd(24)} queue  ${queue.url}`);
  }
  if (resources.notEmulated.length)
    log(`  deployed but not emulated locally: ${resources.notEmulated.join(', ')}`);
}

/**
 * Resolves a function's stream, environment and on-failure destination, and loads its handler
 * with that environment (the servers' endpoints over it); undefined, said in `log`, for a mapping
 * that is disabled or reads a stream the app does not declare.
 */
export async function prepareFunction(
  fn: StreamFunctionSettings,
  resources: ServiceResources,
  localEnv: Record<string, string>,
  servers: Servers,
  app: Pick<LocalApp, 'root' | 'declaredIn'>,
  log: (line: string) => void,
  print: { showEnvValues?: boolean } = {},
): Promise<RunningFunction | undefined> {
  const { root, declaredIn } = app;
  if (!fn.stream.enabled) {
    log(`function ${fn.key}: its stream event is disabled (enabled: false); not run`);
    return undefined;
  }
  const streamArn = resources.streamArnOf(fn);
  if (!streamArn) {
    log(
      `function ${fn.key}: its stream (${JSON.stringify(fn.stream.arn)}) is not a table ${declaredIn} ` +
        'declares; not run',
    );
    return undefined;
  }
  const { values, unresolved } = resolveEnvironment(fn.environment, resources);
  for (const { name, reason } of unresolved)
    log(`warning: function ${fn.key}: environment ${name} is left unset: ${reason}`);
  // The local servers' endpoints win over anything serverless.yml sets for AWS.
  const environment = { ...values, ...localEnv };
  const restore = overlayEnv(environment);
  let handler: StreamHandler;
  try {
    handler = await loadHandler<StreamHandler>(handlerFile(fn, { root }), fn.handlerExport, { root });
  } finally {
    restore();
  }
  const { destination, queue, note } = onFailureDestination(fn, resources, servers);
  const s = fn.stream;
  const settings = [
    `batch ${s.batchSize ?? 100}`,
    ...(s.filterPatterns
      ? [`${s.filterPatterns.length} filter pattern${s.filterPatterns.length === 1 ? '' : 's'}`]
      : []),
    ...(s.reportBatchItemFailures ? ['ReportBatchItemFailures'] : []),
    ...(s.bisectBatchOnFunctionError ? ['bisect'] : []),
    `retries ${s.maximumRetryAttempts === undefined || s.maximumRetryAttempts < 0 ? 'unbounded' : s.maximumRetryAttempts}`,
    `from ${s.startingPosition}`,
    ...(s.tumblingWindowInSeconds ? [`tumbling window ${s.tumblingWindowInSeconds} s`] : []),
  ];
  log(`function ${fn.key} (${fn.handler}) ← ${streamArn}`);
  log(`  ${settings.join(', ')}; on failure: ${note}`);
  for (const line of environmentLines(values, unresolved, print.showEnvValues === true)) log(`  ${line}`);
  return {
    fn,
    streamArn,
    environment: values,
    handler,
    ...(destination ? { onFailure: destination } : {}),
    ...(queue ? { onFailureQueue: queue } : {}),
    onFailureNote: note,
  };
}

/**
 * A function's environment as `start` prints it: each name and whether it is set; the values only
 * when asked, since one may be a secret.
 */
export function environmentLines(
  values: Readonly<Record<string, string>>,
  unresolved: readonly { name: string }[],
  showValues: boolean,
): string[] {
  if (showValues) return Object.entries(values).map(([name, value]) => `${name}=${value}`);
  const names = [
    ...Object.keys(values).map((name) => `${name} (set)`),
    ...unresolved.map(({ name }) => `${name} (unset)`),
  ];
  return names.length === 0 ? [] : [`environment: ${names.join(', ')} (values: --show-env-values)`];
}

/** How runFunction runs one function, and what it reports. */
export interface FunctionRun {
  checkpointFile: string;
  signal: AbortSignal;
  /** Stop once the stream is caught up. */
  once?: boolean;
  /** Every emulator decision in `log`, not only responses and discards. */
  verbose?: boolean;
  log: (line: string) => void;
  /** Counted as Lambda would bill and lose: invocations, records discarded. */
  stats: { invocations: number; discarded: number };
  /** Every emulator event, after it is counted and logged. */
  onEvent?: (event: EmulatorEvent) => void;
}

/** Polls a prepared function's stream into its handler through the event-source-mapping emulator. */
export async function runFunction(
  running: RunningFunction,
  servers: Servers,
  run: FunctionRun,
): Promise<void> {
  const { fn } = running;
  const { log, stats } = run;
  const sizes = new Map<string, number>();
  const onEvent = (event: EmulatorEvent) => {
    if (run.verbose) log(`${fn.key}: ${describeEvent(event)}`);
    if (event.type === 'invoke') {
      stats.invocations++;
      sizes.set(event.requestId, event.sequenceNumbers.length);
    } else if (event.type === 'response') {
      const size = sizes.get(event.requestId) ?? 0;
      sizes.delete(event.requestId);
      if (!run.verbose)
        log(
          `${fn.key}: ${size} record${size === 1 ? '' : 's'} → ${event.outcome}${event.error ? `: ${event.error}` : ''}`,
        );
    } else if (event.type === 'discard') {
      const size = batchInfoOf(event.record).batchSize;
      stats.discarded += size;
      log(
        `${fn.key}: ${size} record${size === 1 ? '' : 's'} discarded (${event.condition}); on failure: ${running.onFailureNote}`,
      );
    } else if (event.type === 'expired') {
      const size = event.sequenceNumbers.length;
      stats.discarded += size;
      log(
        `${fn.key}: ${size} record${size === 1 ? '' : 's'} retried past the stream's 24-hour retention: ` +
          'lost, as Lambda loses them (bound maximumRetryAttempts or maximumRecordAgeInSeconds)',
      );
    }
    run.onEvent?.(event);
  };
  const mapping = {
    ...toEmulatorOptions(fn, { region: servers.aws.region }),
    keepLog: false,
    ...(running.onFailure ? { onFailure: running.onFailure } : {}),
    onEvent,
  };
  const until = { signal: run.signal, ...(run.once ? { stopWhenCaughtUp: true } : {}) };
  if (fn.stream.source === 'kinesis') {
    // prepareFunction found the stream among the app's Kinesis streams, so the server runs.
    const kinesis = servers.kinesis?.client as NonNullable<Servers['kinesis']>['client'];
    const emulator = new KinesisMappingEmulator({
      ...mapping,
      // createStreamHandler's handler takes either kind of event; which one is EVENT_SOURCE's business.
      handler: running.handler as unknown as KinesisStreamHandler,
    });
    const reader = new KinesisShardReader({
      kinesis,
      streamArn: running.streamArn,
      startingPosition: fn.stream.startingPosition,
      checkpointFile: run.checkpointFile,
    });
    await reader.runEmulator(emulator, until);
    return;
  }
  const emulator = new EventSourceMappingEmulator({ ...mapping, handler: running.handler });
  const poller = new StreamPoller({
    streams: servers.aws.streams,
    streamArn: running.streamArn,
    startingPosition: fn.stream.startingPosition,
    checkpointFile: run.checkpointFile,
  });
  await poller.runEmulator(emulator, until);
}

/**
 * A KinesisBridge per table with a Kinesis streaming destination: the table's DynamoDB stream put
 * into its Kinesis stream as the destination writes it, each with its own checkpoint.
 */
function kinesisBridges(
  resources: ServiceResources,
  servers: Servers,
  checkpoints: string,
  log: (line: string) => void,
): KinesisBridge[] {
  const out: KinesisBridge[] = [];
  for (const table of resources.tables) {
    const destination = table.kinesisDestination;
    if (!destination || !table.streamArn || !servers.kinesis) continue;
    log(`  ${table.logicalId}'s changes → ${destination.streamArn} (its Kinesis streaming destination)`);
    out.push(
      new KinesisBridge({
        streams: servers.aws.streams,
        tableStreamArn: table.streamArn,
        tableName: table.name,
        kinesis: servers.kinesis.client,
        kinesisStreamArn: destination.streamArn,
        precision: destination.precision,
        checkpointFile: join(checkpoints, `${table.logicalId}.kinesis-bridge.json`),
      }),
    );
  }
  return out;
}
