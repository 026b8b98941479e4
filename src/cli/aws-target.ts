import { readFile } from 'node:fs/promises';
import type { Command } from 'commander';

/** The flags that choose where `replay` and `capture` send their AWS requests. */
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

const endpointOf = (env: Record<string, string | undefined>, service: string) =>
  env[`AWS_ENDPOINT_URL_${service}`] || env.AWS_ENDPOINT_URL || undefined;

/**
 * The variables to add to the environment for the run, after saying on stderr where each
 * service's requests go. A shell without local endpoints would send them to AWS, with whatever
 * credentials it holds: that takes `--aws`; otherwise the command fails before any request.
 */
export async function awsTarget(
  command: Command,
  flags: AwsTargetFlags,
  services: readonly string[],
): Promise<Record<string, string>> {
  const fromFile = flags.localEnv ? parseEnvFile(await readFile(flags.localEnv, 'utf8')) : {};
  const env = { ...process.env, ...fromFile };
  const missing = services.filter((service) => endpointOf(env, service) === undefined);
  if (missing.length > 0 && !flags.aws) {
    command.error(
      `error: no local endpoint for ${missing.join(', ')} (AWS_ENDPOINT_URL_${missing[0]}): the requests would go ` +
        'to real AWS. Run `tidewater start --write-env .env.local` and pass --local-env .env.local (or export ' +
        'the variables start prints), or pass --aws to use AWS.',
    );
  }
  for (const service of services)
    process.stderr.write(
      `${service.toLowerCase()}: ${endpointOf(env, service) ?? `AWS (${env.AWS_REGION ?? env.AWS_DEFAULT_REGION ?? 'the SDK region'})`}\n`,
    );
  return fromFile;
}

/** `NAME=value` lines, as `start --write-env` writes them; blank lines and # comments skipped. */
function parseEnvFile(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of text.split('\n')) {
    const match = /^\s*([A-Za-z_][A-Za-z0-9_]*)=(.*)$/.exec(line);
    if (match) out[match[1] as string] = (match[2] as string).trim();
  }
  return out;
}
