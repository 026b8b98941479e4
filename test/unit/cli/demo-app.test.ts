import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { runDemo } from '../../../src/cli/demo-app.js';
import { InvalidOptionsError } from '../../../src/core/index.js';
import { ServerlessConfigError } from '../../../src/local/index.js';

// A service whose serverless.yml has two stream functions and one scheduled function.
const root = fileURLToPath(new URL('../local/config/fixtures/', import.meta.url));

// What the demo finds wrong is found before any server starts (these runs need no Java).
describe('the demo app reads its functions from serverless.yml', () => {
  it('rejects unknown and ill-typed options', async () => {
    await expect(runDemo({ expired: 3 } as never)).rejects.toThrow(/runDemo: unknown option 'expired'/);
    await expect(runDemo({ votes: -1 })).rejects.toBeInstanceOf(InvalidOptionsError);
    await expect(runDemo({ contestants: [] })).rejects.toThrow(
      /option 'contestants' must be a non-empty list/,
    );
  });

  it('takes the only stream function and the only scheduled one with a POLL, else says which is missing', async () => {
    await expect(runDemo({ root, env: {} })).rejects.toThrow(
      /several functions have a DynamoDB stream event; pick one with -f \(archive, shorthand\)/,
    );
    await expect(
      runDemo({ root, env: {}, archiveFunction: 'archive', aggregateFunction: 'nope' }),
    ).rejects.toThrow(/no function 'nope' under functions:/);
  });

  it("loads the named functions' handlers from the service (none exist in this fixture)", async () => {
    const run = runDemo({ root, env: {}, archiveFunction: 'archive', aggregateFunction: 'scheduled' });
    await expect(run).rejects.toBeInstanceOf(ServerlessConfigError);
    await expect(run).rejects.toThrow(/no handler file for 'src\/archive\.handler'/);
  });
});
