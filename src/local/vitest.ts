import { afterAll, beforeAll } from 'vitest';
import { type LocalAws, type LocalAwsOptions, startLocalAws } from './local-aws.js';

/**
 * Gives a test file its own DynamoDB Local and S3 server: started before the file's tests,
 * stopped after. `env` is applied to process.env while the file runs (and restored), so code
 * that builds its own SDK clients reaches the local servers. Read `.current` inside tests.
 */
export function useLocalAws(options: LocalAwsOptions & { applyEnv?: boolean } = {}): {
  readonly current: LocalAws;
} {
  const { applyEnv = true, ...startOptions } = options;
  let local: LocalAws | undefined;
  const saved = new Map<string, string | undefined>();
  beforeAll(async () => {
    local = await startLocalAws(startOptions);
    if (applyEnv) {
      for (const [name, value] of Object.entries(local.env)) {
        saved.set(name, process.env[name]);
        process.env[name] = value;
      }
    }
  }, 120_000);
  afterAll(async () => {
    for (const [name, value] of saved) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
    await local?.stop();
  });
  return {
    get current(): LocalAws {
      if (!local)
        throw new Error('useLocalAws: the local servers start in beforeAll; use .current inside a test');
      return local;
    },
  };
}
