import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { EXIT } from '../../../src/cli/exit-codes.js';
import { main } from '../../../src/cli/program.js';
import { captureOutput } from '../../support/capture-output.js';

// A fresh shell: no endpoint variables, so the SDK would go to AWS.
beforeEach(() => {
  for (const name of Object.keys(process.env))
    if (name.startsWith('AWS_ENDPOINT_URL')) vi.stubEnv(name, undefined);
});
afterEach(() => {
  vi.restoreAllMocks();
  vi.unstubAllEnvs();
  process.exitCode = undefined;
});

describe('replay and capture reach AWS only with --aws', () => {
  it.each([
    [['replay', 'no-such-events.jsonl', '-c', 'no-such-serverless.yml'], 'DYNAMODB, S3'],
    [
      ['capture', '--stream-arn', 'arn:aws:dynamodb:us-east-1:1:table/t/stream/x', '-o', 'x.jsonl'],
      'DYNAMODB, DYNAMODB_STREAMS',
    ],
  ])(
    '%j without local endpoints: a usage error naming them, before reading anything',
    async (args, services) => {
      const { err } = captureOutput();
      expect(await main(args)).toBe(EXIT.usage);
      const text = err.join('');
      expect(text).toContain(`no local endpoint for ${services}`);
      expect(text).toMatch(/--local-env .*--aws to use AWS/s);
      // It stopped before the config file (which does not exist) was read.
      expect(text).not.toMatch(/no-such|ENOENT/);
    },
  );

  it('--local-env reads the endpoints start --write-env wrote, and says where requests go', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tidewater-target-'));
    const envFile = join(dir, 'local.env');
    await writeFile(
      envFile,
      'AWS_ENDPOINT_URL_DYNAMODB=http://127.0.0.1:9\nAWS_ENDPOINT_URL_S3=http://127.0.0.1:9\n',
    );
    const { err } = captureOutput();
    // The serverless.yml is missing: the run fails after saying where it would send requests.
    expect(await main(['replay', 'e.jsonl', '-c', join(dir, 'serverless.yml'), '--local-env', envFile])).toBe(
      EXIT.error,
    );
    expect(err.join('')).toMatch(/^dynamodb: http:\/\/127\.0\.0\.1:9\ns3: http:\/\/127\.0\.0\.1:9\n/);
  });

  it('--aws says the requests go to AWS', async () => {
    vi.stubEnv('AWS_REGION', 'eu-west-1');
    const dir = await mkdtemp(join(tmpdir(), 'tidewater-target-'));
    const { err } = captureOutput();
    expect(await main(['replay', 'e.jsonl', '-c', join(dir, 'serverless.yml'), '--aws'])).toBe(EXIT.error);
    expect(err.join('')).toMatch(/^dynamodb: AWS \(eu-west-1\)\ns3: AWS \(eu-west-1\)\n/);
  });
});
