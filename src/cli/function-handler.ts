import { type Command, Option } from 'commander';
import {
  handlerFile,
  type LocalApp,
  loadHandler,
  loadLocalApp,
  resolveHandlerModule,
  type StreamFunctionSettings,
  type StreamHandler,
} from '../local/index.js';
import { overlayEnv } from '../local/servers/process-env.js';
import type { Pipeline } from '../pipeline/engine.js';
import { pipelineOfHandler } from '../pipeline/middleware.js';
import { NotAStreamHandlerError } from './errors.js';
import { functionEnvironment, streamFunctionOf } from './function-env.js';
import { splitHandler } from './parse.js';

/** The flags that choose a stream function and its handler (`replay`, `redrive`). */
export interface FunctionFlags {
  config: string;
  template?: string;
  cdkOut?: string;
  function?: string;
  stage: string;
  handler?: string;
  verbose?: boolean;
}

/**
 * The options that choose a function and its handler, one spelling for every command that runs
 * a function's handler (`replay`, `redrive`, `backfill`). `handler` says what `--handler` takes.
 */
export function functionOptions(
  command: Command,
  handler = "call this handler instead of the function's own",
): Command {
  return command
    .option(
      '-c, --config <file>',
      "serverless.yml to read the function's handler, settings and environment from",
      'serverless.yml',
    )
    .addOption(templateOption())
    .addOption(cdkOutOption())
    .option(
      '-f, --function <key>',
      'function under functions: (a template: its logical id; default: the only one with a DynamoDB stream event)',
    )
    .option(
      '-s, --stage <stage>',
      'the serverless stage (sls:stage); with --cdk-out, also the CDK Stage to read',
      'local',
    )
    .option('--handler <module#export>', handler);
}

/** `--template`: a SAM template read instead of serverless.yml (one or the other). */
export function templateOption(): Option {
  return new Option(
    '--template <file>',
    'a SAM template (AWS::Serverless::Function with DynamoDB events) instead of serverless.yml',
  ).conflicts(['config', 'cdkOut']);
}

/** `--cdk-out`: a CDK app's synthesized output read instead of serverless.yml. */
export function cdkOutOption(): Option {
  return new Option(
    '--cdk-out <dir>',
    "a CDK app's synthesized cloud assembly (cdk.out, after `cdk synth`) instead of serverless.yml",
  ).conflicts(['config', 'template']);
}

/**
 * The app the flags name: --template, --cdk-out, else -c's serverless.yml. `checkFunctions: false`
 * for a command that runs no function (see LocalAppOptions).
 */
export function loadFlaggedApp(
  flags: {
    config: string;
    template?: string;
    cdkOut?: string;
    stage: string;
  },
  options: { checkFunctions?: boolean } = {},
): Promise<LocalApp> {
  const { stage } = flags;
  return loadLocalApp({
    ...(flags.template !== undefined
      ? { template: flags.template }
      : flags.cdkOut !== undefined
        ? { cdkOut: flags.cdkOut }
        : { config: flags.config }),
    stage,
    ...options,
  });
}

/**
 * Runs `run` with a function's handler loaded as Lambda would (serverless.yml's handler, or
 * `--handler module#export`) and the function's environment set for the whole run, then the
 * caller's put back: the handler reads it at import (cold start) and per invocation.
 */
export async function withFunctionHandler(
  flags: FunctionFlags,
  run: (fn: StreamFunctionSettings, handler: StreamHandler) => Promise<void>,
  /** Set under the function's own environment (the endpoints a command targets). */
  baseEnv: Readonly<Record<string, string>> = {},
): Promise<void> {
  const app = await loadFlaggedApp(flags);
  const fn = await streamFunctionOf(app, flags.function);
  // The project root is serverless.yml's (or the template's) folder: handler paths, esbuild and
  // dist/ are taken from it.
  const root = app.root;
  const warn = (line: string) => process.stderr.write(`warning: ${line}\n`);
  const environment = await functionEnvironment(app, fn, { warn });
  if (flags.verbose)
    for (const [name, value] of Object.entries(environment)) process.stderr.write(`env ${name}=${value}\n`);
  const restoreEnv = overlayEnv({ ...baseEnv, ...environment });
  try {
    const handler = flags.handler
      ? await importHandler(flags.handler, root)
      : await loadHandler<StreamHandler>(handlerFile(fn, { root }), fn.handlerExport, { root });
    await run(fn, handler);
  } finally {
    restoreEnv();
  }
}

/** `--handler module#export`: the module is taken from the working directory, as typed. */
function importHandler(spec: string, root: string): Promise<StreamHandler> {
  const { module, exportName } = splitHandler(spec);
  return loadHandler<StreamHandler>(resolveHandlerModule(module, process.cwd()), exportName, { root });
}

/**
 * The function's pipeline (what `backfill` and `archive replay` deliver through), its handler
 * imported as Lambda would (or `--handler`) with the function's environment set, kept while it
 * runs: `restoreEnv` puts the caller's back. A handler that is no createStreamHandler's is a
 * NotAStreamHandlerError.
 */
export async function functionPipeline(
  flags: FunctionFlags,
): Promise<{ pipeline: Pipeline; restoreEnv: () => void }> {
  const app = await loadFlaggedApp(flags);
  const fn = await streamFunctionOf(app, flags.function);
  const environment = await functionEnvironment(app, fn, {
    warn: (line) => process.stderr.write(`warning: ${line}\n`),
  });
  const restoreEnv = overlayEnv(environment);
  try {
    const root = app.root;
    let name = `${fn.handler}`;
    let handler: unknown;
    if (flags.handler) {
      const { module, exportName } = splitHandler(flags.handler);
      name = flags.handler;
      handler = await loadHandler(resolveHandlerModule(module, process.cwd()), exportName, { root });
    } else handler = await loadHandler(handlerFile(fn, { root }), fn.handlerExport, { root });
    const pipeline = pipelineOfHandler(handler);
    if (pipeline === undefined) throw new NotAStreamHandlerError(name);
    return { pipeline, restoreEnv };
  } catch (error) {
    restoreEnv();
    throw error;
  }
}
