/**
 * The `tidewater/local/vitest` entry point.
 * @module tidewater/local/vitest
 */
import { afterAll, beforeAll } from 'vitest';
import { TidewaterError } from '../../core/index.js';
import { type LocalAws, type LocalAwsOptions, startLocalAws } from './local-aws.js';
import { overlayEnv } from './process-env.js';

/**
 * Gives a test file its own DynamoDB Local and S3 server: started before the file's tests,
 * stopped after. `env` is applied to process.env while the file runs (and restored), so code
 * that builds its own SDK clients reaches the local servers. Read `.current` inside tests.
 */
export function useLocalAws(
  options: LocalAwsOptions & {
    applyEnv?: boolean;
    /** How long beforeAll may take to start the servers (ms): the first run may unpack the jar. */
    startTimeoutMs?: number;
  } = {},
): {
  readonly current: LocalAws;
} {
  const { applyEnv = true, startTimeoutMs = 120_000, ...startOptions } = options;
  let local: LocalAws | undefined;
  let restoreEnv = (): void => undefined;
  beforeAll(async () => {
    local = await startLocalAws(startOptions);
    if (applyEnv) restoreEnv = overlayEnv(local.env);
  }, startTimeoutMs);
  afterAll(async () => {
    restoreEnv();
    await local?.stop();
  });
  return {
    get current(): LocalAws {
      if (!local)
        throw new TidewaterError(
          'useLocalAws: the local servers start in beforeAll; use .current inside a test',
        );
      return local;
    },
  };
}
