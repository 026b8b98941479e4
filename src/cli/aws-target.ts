import { readFile, stat } from 'node:fs/promises';
import type { Command } from 'commander';
import { describeError } from '../core/errors.js';
import { AwsTargetError, EndpointUnreachableError } from './errors.js';

/**
 * The flags that choose where a command that can reach AWS sends its requests (`replay`,
 * `capture`, `backfill`, `redrive`, `archive …`): one rule for all of them, README's "Where the
 * commands send their requests".
 */
export interface AwsTargetFlags {
  /** `--local-env <file>`: the endpoints `tidewater start --write-env` wrote. */
  localEnv?: string;
  /** `--aws`: the user asked for real AWS. */
  aws?: boolean;
}

/** Adds --local-env and --aws to a command that makes AWS requests. */
export function withAwsTarget(command: Command): Command {
  return command
    .option('--local-env <file>', 'use the local endpoints `tidewater start --write-env <file>` wrote')
    .option('--aws', 'send requests to real AWS (the SDK credentials and region of this shell)');
}

/** An env file larger than this is not one `start` wrote: refused before it is read. */
const MAX_ENV_FILE_BYTES = 64 * 1024;
/** How long a local endpoint may take to answer at all before the command gives up on it. */
const PROBE_TIMEOUT_MS = 5_000;

type Env = Readonly<Record<string, string | undefined>>;

const variableOf = (env: Env, service: string): string | undefined =>
  env[`AWS_ENDPOINT_URL_${service}`]
    ? `AWS_ENDPOINT_URL_${service}`
    : env.AWS_ENDPOINT_URL
      ? 'AWS_ENDPOINT_URL'
      : undefined;

/** An endpoint as messages show it: its origin (no user info or path), or `?` when it is no URL. */
function shown(endpoint: string): string {
  try {
    return new URL(endpoint).origin;
  } catch {
    return '?';
  }
}

/**
 * The variables to add to the environment for the run, after saying on stderr where each
 * service's requests go. A shell without local endpoints would send them to AWS, with whatever
 * credentials it holds: that takes `--aws`; otherwise AwsTargetError before any request. Every
 * local endpoint is asked first whether it answers at all, so a stale `--local-env` file fails in
 * seconds naming the endpoint, not after minutes of the SDK's retries.
 */
export async function awsTarget(
  flags: AwsTargetFlags,
  services: readonly string[],
  options: { probeTimeoutMs?: number } = {},
): Promise<Record<string, string>> {
  const fromFile = flags.localEnv ? await readEnvFile(flags.localEnv) : Object.create(null);
  const env: Env = { ...process.env, ...fromFile };
  const missing = services.filter((service) => variableOf(env, service) === undefined);
  if (missing.length > 0 && !flags.aws) throw new AwsTargetError(missing);
  const probes = new Map<string, Promise<void>>();
  for (const service of services) {
    const variable = variableOf(env, service);
    if (variable === undefined) continue;
    const endpoint = env[variable] as string;
    const from = variable in fromFile ? (flags.localEnv as string) : 'the shell';
    if (!probes.has(endpoint))
      probes.set(endpoint, probe(variable, endpoint, from, options.probeTimeoutMs ?? PROBE_TIMEOUT_MS));
  }
  await Promise.all(probes.values());
  for (const service of services) {
    const variable = variableOf(env, service);
    process.stderr.write(
      `${service.toLowerCase()}: ${variable ? shown(env[variable] as string) : `AWS (${env.AWS_REGION ?? env.AWS_DEFAULT_REGION ?? 'the SDK region'})`}\n`,
    );
  }
  return fromFile;
}

/** Whether anything answers HTTP at the endpoint: any response will do, only no answer fails. */
async function probe(variable: string, endpoint: string, from: string, timeoutMs: number): Promise<void> {
  let url: URL;
  try {
    url = new URL(endpoint);
  } catch {
    throw new EndpointUnreachableError(variable, '?', from, 'not a URL');
  }
  try {
    const response = await fetch(url.origin, { signal: AbortSignal.timeout(timeoutMs) });
    await response.body?.cancel();
  } catch (error) {
    const cause = (error as { cause?: { code?: string } }).cause?.code;
    const detail =
      (error as Error).name === 'TimeoutError'
        ? `no answer in ${timeoutMs / 1000} s`
        : (cause ?? describeError(error));
    throw new EndpointUnreachableError(variable, url.origin, from, detail);
  }
}

/** `NAME=value` lines, as `start --write-env` writes them; blank lines and # comments skipped. */
async function readEnvFile(file: string): Promise<Record<string, string>> {
  let text: string;
  try {
    if ((await stat(file)).size > MAX_ENV_FILE_BYTES)
      throw new AwsTargetError(
        [],
        `--local-env ${file}: larger than ${MAX_ENV_FILE_BYTES} bytes, not an env file`,
      );
    text = await readFile(file, 'utf8');
  } catch (error) {
    if (error instanceof AwsTargetError) throw error;
    throw new AwsTargetError(
      [],
      `--local-env ${file}: cannot read it (${(error as NodeJS.ErrnoException).code ?? 'error'}); ` +
        'run `tidewater start --write-env <file>` first, or pass --aws to use AWS',
    );
  }
  return parseEnvText(text);
}

/** Parsed into a prototype-less record: a line `__proto__=…` is a name like any other. */
export function parseEnvText(text: string): Record<string, string> {
  const out: Record<string, string> = Object.create(null);
  for (const line of text.split('\n')) {
    const match = /^\s*([A-Za-z_][A-Za-z0-9_]*)=(.*)$/.exec(line);
    if (match) out[match[1] as string] = (match[2] as string).trim();
  }
  return out;
}
