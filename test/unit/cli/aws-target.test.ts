import { mkdtemp, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { parseEnvText } from '../../../src/cli/aws-target.js';
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

/** Something that answers HTTP, as any local server does (what it answers does not matter). */
let server: Server;
let live: string;
/** A port nothing listens on any more. */
let dead: string;
beforeAll(async () => {
  server = createServer((_, res) => res.writeHead(400).end());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  live = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const gone = createServer();
  await new Promise<void>((resolve) => gone.listen(0, '127.0.0.1', resolve));
  dead = `http://127.0.0.1:${(gone.address() as AddressInfo).port}`;
  await new Promise((resolve) => gone.close(resolve));
});
afterAll(() => new Promise((resolve) => server.close(resolve)));

async function envFile(lines: string[]): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'tidewater-target-'));
  const file = join(dir, 'local.env');
  await writeFile(file, `${lines.join('\n')}\n`);
  return file;
}

const STREAM = 'arn:aws:dynamodb:us-east-1:1:table/t/stream/x';

describe('every command that can reach AWS needs local endpoints or --aws', () => {
  it.each([
    [['replay', 'no-such-events.jsonl', '-c', 'no-such-serverless.yml'], 'DYNAMODB, S3'],
    [['capture', '--stream-arn', STREAM, '-o', 'x.jsonl'], 'DYNAMODB, DYNAMODB_STREAMS'],
    [['backfill', '--scan', 'no-such-table', '-c', 'no-such-serverless.yml'], 'DYNAMODB, S3'],
    [
      ['redrive', '--stream-arn', STREAM, '--queue-url', 'http://q', '--invoke', 'f'],
      'DYNAMODB_STREAMS, SQS, LAMBDA',
    ],
    [
      ['redrive', '--stream-arn', STREAM, '--bucket', 'b', '-c', 'no-such-serverless.yml'],
      'DYNAMODB_STREAMS, S3, DYNAMODB',
    ],
    [['aggregate', '-t', 'votes'], 'DYNAMODB'],
    [['archive', 'compact', '-b', 'b', '-t', 't', '--hour', '2026-01-15T03'], 'S3'],
    [
      [
        'archive',
        'erase-tenant',
        '-b',
        'b',
        '-t',
        't',
        '--tenant',
        'x',
        '--from',
        '2026-01-01',
        '--to',
        '2026-01-02',
      ],
      'S3',
    ],
  ])(
    '%j without local endpoints: a usage error naming them and both ways, before reading anything',
    async (args, services) => {
      const { err } = captureOutput();
      expect(await main(args)).toBe(EXIT.usage);
      const text = err.join('');
      expect(text).toContain(`AwsTargetError: no local endpoint for ${services}`);
      expect(text).toMatch(/--local-env .*--aws to use AWS/s);
      // It stopped before the config file (which does not exist) was read.
      expect(text).not.toMatch(/no-such|ENOENT|Region is missing/);
    },
  );

  it('a --local-env file whose server is gone fails at once, naming the variable and the file', async () => {
    const file = await envFile([`AWS_ENDPOINT_URL_DYNAMODB=${live}`, `AWS_ENDPOINT_URL_S3=${dead}`]);
    const { err } = captureOutput();
    expect(await main(['replay', 'e.jsonl', '-c', 'no-such-serverless.yml', '--local-env', file])).toBe(
      EXIT.error,
    );
    const text = err.join('');
    expect(text).toContain(
      `EndpointUnreachableError: AWS_ENDPOINT_URL_S3=${dead} (${file}) does not answer (ECONNREFUSED)`,
    );
    expect(text).toContain('Is `tidewater start` still running?');
    expect(text).not.toMatch(/no-such/);
  });

  it('an endpoint in the shell is asked too; a missing --local-env file is a usage error', async () => {
    vi.stubEnv('AWS_ENDPOINT_URL_S3', dead);
    const { err } = captureOutput();
    expect(await main(['archive', 'compact', '-b', 'b', '-t', 't', '--hour', '2026-01-15T03'])).toBe(
      EXIT.error,
    );
    expect(err.join('')).toContain(`AWS_ENDPOINT_URL_S3=${dead} (the shell) does not answer`);
    expect(
      await main([
        'archive',
        'compact',
        '-b',
        'b',
        '-t',
        't',
        '--hour',
        '2026-01-15T03',
        '--local-env',
        '/no/such.env',
      ]),
    ).toBe(EXIT.usage);
    expect(err.join('')).toContain('--local-env /no/such.env: cannot read it (ENOENT)');
  });

  it('--local-env reads the endpoints start --write-env wrote, and says where requests go', async () => {
    const file = await envFile([`AWS_ENDPOINT_URL_DYNAMODB=${live}`, `AWS_ENDPOINT_URL_S3=${live}/`]);
    const { err } = captureOutput();
    // The serverless.yml is missing: the run fails after saying where it would send requests.
    expect(await main(['replay', 'e.jsonl', '-c', 'no-such-serverless.yml', '--local-env', file])).toBe(
      EXIT.error,
    );
    expect(err.join('')).toMatch(new RegExp(`^dynamodb: ${live}\\ns3: ${live}\\n`));
  });

  it('--aws says the requests go to AWS', async () => {
    vi.stubEnv('AWS_REGION', 'eu-west-1');
    const { err } = captureOutput();
    expect(await main(['replay', 'e.jsonl', '-c', 'no-such-serverless.yml', '--aws'])).toBe(EXIT.error);
    expect(err.join('')).toMatch(/^dynamodb: AWS \(eu-west-1\)\ns3: AWS \(eu-west-1\)\n/);
  });
});

describe('parseEnvText', () => {
  it('reads NAME=value lines into a record without a prototype', () => {
    const env = parseEnvText('# c\nA=1\n__proto__=x\n  B = no\nC= 2 \n');
    expect(Object.getPrototypeOf(env)).toBeNull();
    expect(Object.entries(env)).toEqual([
      ['A', '1'],
      ['__proto__', 'x'],
      ['C', '2'],
    ]);
  });
});
