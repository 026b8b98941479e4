import { TidewaterError } from '../core/errors.js';

/** `tidewater init` cannot scaffold into this folder (it is missing, or its package.json is broken). */
export class InitError extends TidewaterError {
  override name = 'InitError';
  constructor(
    readonly path: string,
    detail: string,
  ) {
    super(`${path}: ${detail}`);
  }
}

/** `tidewater backfill` was pointed at a handler it cannot take the pipeline of. */
export class NotAStreamHandlerError extends TidewaterError {
  override name = 'NotAStreamHandlerError';
  constructor(readonly handler: string) {
    super(
      `${handler} is not a handler made by createStreamHandler: a backfill runs its pipeline (routes, handlers, ` +
        "sinks), so point --handler at one, or call runBackfill(config, …) from 'tidewater/backfill' in a script",
    );
  }
}

/**
 * A command that can reach AWS was given neither local endpoints (`--local-env <file>`, or
 * `AWS_ENDPOINT_URL_*` in the shell) nor `--aws`: the one rule every such command follows
 * (README, "Where the commands send their requests"). A usage error: nothing was sent.
 */
export class AwsTargetError extends TidewaterError {
  override name = 'AwsTargetError';
  constructor(
    readonly services: readonly string[],
    detail?: string,
  ) {
    super(
      detail ??
        `no local endpoint for ${services.join(', ')} (AWS_ENDPOINT_URL_${services[0]}): the requests would go ` +
          'to real AWS. Run `tidewater start --write-env .env.local` and pass --local-env .env.local (or export ' +
          'the variables start prints), or pass --aws to use AWS.',
    );
  }
}

/** A local endpoint the command would use does not answer (a `--local-env` file whose servers are gone). */
export class EndpointUnreachableError extends TidewaterError {
  override name = 'EndpointUnreachableError';
  constructor(
    readonly variable: string,
    readonly endpoint: string,
    from: string,
    detail: string,
  ) {
    super(
      `${variable}=${endpoint} (${from}) does not answer (${detail}). Is \`tidewater start\` still running? ` +
        'Start it again (it rewrites its --write-env file), or pass --aws to use AWS.',
    );
  }
}

/** A table, function or export the command line named does not exist; the nearest that do are suggested. */
export class NameNotFoundError extends TidewaterError {
  override name = 'NameNotFoundError';
  constructor(
    readonly kind: string,
    readonly missing: string,
    message: string,
  ) {
    super(message);
  }
}
