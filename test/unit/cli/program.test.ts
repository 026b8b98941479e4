import { spawn } from 'node:child_process';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, inject, it, onTestFinished, vi } from 'vitest';
import { EXIT } from '../../../src/cli/exit-codes.js';
import { main } from '../../../src/cli/program.js';
import { streamEvents } from '../../../src/local/emulator/events.js';
import { captureOutput } from '../../support/capture-output.js';
import { streamFunctionLines } from '../../support/stream-function-yaml.js';

beforeEach(() => {
  // replay needs local endpoints that answer (or --aws): the run's servers, which these handlers never call.
  vi.stubEnv('AWS_ENDPOINT_URL_DYNAMODB', inject('dynamoEndpoint'));
  vi.stubEnv('AWS_ENDPOINT_URL_S3', inject('s3Endpoint'));
});
afterEach(() => {
  vi.restoreAllMocks();
  vi.unstubAllEnvs();
  process.exitCode = undefined;
});

/**
 * A service directory holding a serverless.yml with one stream function `archive` (its stream
 * event's extra settings given), a handler module and a one-record replay file.
 */
async function replayService(service: string, streamSettings: string[], handlerSource: string) {
  const dir = await mkdtemp(join(tmpdir(), 'tidewater-cli-'));
  const config = join(dir, 'serverless.yml');
  await writeFile(
    config,
    [
      `service: ${service}`,
      'provider:',
      '  name: aws',
      ...streamFunctionLines('archive', streamSettings),
      '',
    ].join('\n'),
  );
  const handler = join(dir, 'handler.mjs');
  await writeFile(handler, handlerSource);
  const events = join(dir, 'events.jsonl');
  const build = streamEvents({ tableName: 't' });
  await writeFile(events, `${JSON.stringify({ Records: [build.insert({ pk: 'a' })] })}\n`);
  return {
    config,
    handler: `${handler}#handler`,
    events,
    /** `replay` of the events through the handler. */
    args: ['replay', events, '-c', config, '--handler', `${handler}#handler`],
  };
}

describe('tidewater CLI', () => {
  it('every command has --help', async () => {
    for (const command of [
      'init',
      'start',
      'replay',
      'capture',
      'aggregate',
      'archive',
      'backfill',
      'demo',
    ]) {
      const { out } = captureOutput();
      expect(await main([command, '--help'])).toBe(EXIT.ok);
      expect(out.join('')).toContain(`Usage: tidewater ${command}`);
      vi.restoreAllMocks();
    }
  });

  it('a wrong command line exits with the usage code', async () => {
    const { err } = captureOutput();
    expect(await main(['replay'])).toBe(EXIT.usage);
    expect(err.join('')).toMatch(/missing required argument/);
    expect(await main(['no-such-command'])).toBe(EXIT.usage);
    expect(await main(['capture', '--table', 't', '-o', 'out.jsonl', '--empty-pages', '0'])).toBe(EXIT.usage);
    expect(err.join('')).toMatch(/--empty-pages.*expected at least 1, got 0/);
  });

  it('capture: a wrong command line is a usage error, named', async () => {
    const { err } = captureOutput();
    // No stream named, and no serverless.yml to take the only stream function's from.
    expect(
      await main(['capture', '-o', 'out.jsonl', '-c', join(tmpdir(), 'no-such-dir', 'serverless.yml')]),
    ).toBe(EXIT.usage);
    expect(err.join('')).toMatch(
      /give --stream-arn, --table or --function \(there is no .*serverless\.yml to read\)/,
    );
    expect(await main(['capture', '--table', 't', '--function', 'f', '-o', 'out.jsonl'])).toBe(EXIT.usage);
    expect(err.join('')).toMatch(/give one of --stream-arn, --table and --function/);
    expect(await main(['capture', '--table', 't', '--stream-arn', 'arn', '-o', 'out.jsonl'])).toBe(
      EXIT.usage,
    );
    expect(await main(['capture', '--table', 't', '-o', 'out.jsonl', '--from', 'yesterday'])).toBe(
      EXIT.usage,
    );
    expect(err.join('')).toMatch(/--from.*yesterday.*trim-horizon, latest/s);
  });

  it.each([
    ['start', 'in a service folder'],
    ['demo', "tidewater's own demo service"],
  ])(
    '%s without Java (%s) prints the fix and exits 1, leaving no server behind to hold the process',
    async (command) => {
      // A real process: a server left listening would keep it alive, and this test would time out.
      const emptyBin = await mkdtemp(join(tmpdir(), 'tidewater-no-java-'));
      const service = await mkdtemp(join(tmpdir(), 'tidewater-no-java-service-'));
      await writeFile(
        join(service, 'serverless.yml'),
        'service: no-java\nprovider:\n  name: aws\nresources:\n  Resources: {}\n',
      );
      const bin = join(process.cwd(), 'src', 'cli', 'bin.ts');
      // tsx from this repository: the process runs in the service folder, which has no node_modules.
      const child = spawn(process.execPath, ['--import', import.meta.resolve('tsx'), bin, command], {
        cwd: service,
        env: { ...process.env, PATH: emptyBin },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      onTestFinished(() => {
        if (child.exitCode === null) child.kill('SIGKILL');
      });
      let stderr = '';
      child.stderr.on('data', (chunk: Buffer) => {
        stderr += chunk.toString();
      });
      const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
      expect(stderr).toMatch(/JavaMissingError: DynamoDB Local needs a Java 17 \(or newer\) runtime/);
      expect(stderr).toMatch(/apt-get install -y openjdk-17-jre-headless/);
      expect(code).toBe(EXIT.error);
    },
  );

  it('start without a serverless.yml names the file and the fix, before starting anything', async () => {
    const { err } = captureOutput();
    const missing = join(await mkdtemp(join(tmpdir(), 'tidewater-empty-')), 'serverless.yml');
    expect(await main(['start', '-c', missing])).toBe(EXIT.error);
    const message = err.join('');
    expect(message).toContain(`ServerlessConfigError: ${missing}: cannot read: no such file`);
    expect(message).toMatch(/pass the file with -c, or scaffold one with `npx tidewater init`/);
    // Nothing was started: no endpoint was printed.
    expect(message).not.toMatch(/DynamoDB\s+http/);
  });

  it('start: --once and --for together, and a bad endpoint, are usage errors', async () => {
    const { err } = captureOutput();
    expect(await main(['start', '--once', '--for', '5'])).toBe(EXIT.usage);
    expect(err.join('')).toMatch(/--once or --for, not both/);
    expect(await main(['start', '--dynamodb-endpoint', 'localhost:8000'])).toBe(EXIT.usage);
    expect(err.join('')).toMatch(/expected an http\(s\) URL, got localhost:8000/);
  });

  it('replay runs serverless.yml settings over a file and exits 0 when nothing is discarded', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tidewater-cli-'));
    const build = streamEvents({ tableName: 'tidewater-local-records', keyAttributes: ['pk', 'sk'] });
    const records = [
      build.insert({ pk: 'a', sk: '1', expiresAt: 1 }),
      build.ttlDelete({ pk: 'a', sk: '1', expiresAt: 1 }),
      build.userDelete({ pk: 'b', sk: '1' }),
    ];
    const file = join(dir, 'events.jsonl');
    await writeFile(file, `${JSON.stringify({ Records: records })}\n`);
    const handlerFile = join(dir, 'handler.mjs');
    const seenFile = join(dir, 'seen.json');
    await writeFile(
      handlerFile,
      `import { appendFileSync } from 'node:fs';
export async function handler(event) {
  appendFileSync(${JSON.stringify(seenFile)}, JSON.stringify(event.Records.map((r) => r.eventName)) + '\\n');
  return { batchItemFailures: [] };
}`,
    );
    const { out, err } = captureOutput();
    const code = await main(['replay', file, '--handler', `${handlerFile}#handler`, '--no-progress']);
    expect(code).toBe(EXIT.ok);
    // serverless.yml's archiveTtl filter lets only the TTL delete through.
    expect((await readFile(seenFile, 'utf8')).trim()).toBe('["REMOVE"]');
    expect(out.join('')).toMatch(/3 records replayed; 0 on-failure records/);
    // It bounds retries, so no warning about a replay that could never end.
    expect(err.join('')).not.toMatch(/warning/);
  });

  it("replay warns when the stream event keeps Lambda's unbounded retries (a failing record would never end it)", async () => {
    // An age limit alone does not end it either: the replay's clock does not move while retrying.
    const service = await replayService(
      'unbounded',
      ['maximumRecordAgeInSeconds: 3600'],
      'export async function handler() { return { batchItemFailures: [] }; }',
    );
    const { out, err } = captureOutput();
    const code = await main([
      'replay',
      service.events,
      '-c',
      service.config,
      '-f',
      'archive',
      '--handler',
      service.handler,
      '--no-progress',
    ]);
    expect(code).toBe(EXIT.ok);
    expect(err.join('')).toMatch(/warning: archive has no maximumRetryAttempts .*set maximumRetryAttempts/s);
    expect(out.join('')).toMatch(/1 records replayed; 0 on-failure records/);
  });

  it('replay of a record that always fails ends with ReplayStalledError, its failures logged once with a count', async () => {
    const service = await replayService(
      'stalls',
      [],
      "export async function handler() { throw new Error('poison'); }",
    );
    const { err } = captureOutput();
    const code = await main([
      'replay',
      service.events,
      '-c',
      service.config,
      '--handler',
      service.handler,
      '--stall-after',
      '4',
      '--no-progress',
    ]);
    const stderr = err.join('');
    expect(code).toBe(EXIT.error);
    expect(stderr).toMatch(/ReplayStalledError: shardId-replay-00000000: 4 invocations in a row failed/);
    expect(stderr).toMatch(/100000000000000000001/);
    expect(stderr).toMatch(/poison/);
    expect(stderr).toMatch(/maximumRetryAttempts/);
    // The four identical failures: one line, then the count once.
    expect(stderr.match(/\(repeated 4 times\)/g)).toHaveLength(1);
    expect(
      stderr.split('\n').filter((line) => line.includes('poison') && !line.includes('ReplayStalledError'))
        .length,
    ).toBeLessThanOrEqual(3);
  });

  it("replay's summary of partial failures carries the error's message", async () => {
    const src = JSON.stringify(join(import.meta.dirname, '..', '..', '..', 'src', 'index.ts'));
    const service = await replayService(
      'partial',
      ['functionResponseType: ReportBatchItemFailures', 'maximumRetryAttempts: 2'],
      [
        `import { createStreamHandler } from ${src};`,
        'export const handler = createStreamHandler({',
        "  handlers: { insert: () => { throw new Error('order total missing'); } },",
        '  retry: { attempts: 1 },',
        '  metrics: false,',
        '});',
      ].join('\n'),
    );
    const { err } = captureOutput();
    const code = await main([...service.args, '--no-progress']);
    expect(code).toBe(EXIT.recordsDiscarded);
    // Once, then with its count: the message is in the human summary, not only in the handler's JSON log.
    expect(err.join('')).toMatch(
      /shardId-replay-00000000: partial-failure from \d+: Error: order total missing \(repeated 3 times\)/,
    );
  });

  it('replay names a misspelled -f or --handler export, listing what exists and the nearest', async () => {
    const service = await replayService(
      'typos',
      [],
      'export async function handler() {}\nexport async function other() {}\nexport const value = 1;\n',
    );
    const { err } = captureOutput();
    expect(
      await main(['replay', service.events, '-c', service.config, '-f', 'archve', '--no-progress']),
    ).toBe(EXIT.error);
    expect(err.join('')).toMatch(/no function 'archve' under functions:.* Did you mean 'archive'\?/);
    const file = service.handler.replace(/#handler$/, '');
    expect(await main(['replay', service.events, '-c', service.config, '--handler', `${file}#handlr`])).toBe(
      EXIT.error,
    );
    expect(err.join('')).toContain(
      "exports no function 'handlr' (its functions: handler, other). Did you mean 'handler'?",
    );
  });

  it('replay refuses a --stall-after that is not a positive whole number or Infinity', async () => {
    captureOutput();
    expect(await main(['replay', 'x.jsonl', '--stall-after', '0'])).toBe(EXIT.usage);
    expect(await main(['replay', 'x.jsonl', '--stall-after', '2.5'])).toBe(EXIT.usage);
  });

  it('replay exits with recordsDiscarded when Lambda would have discarded records', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tidewater-cli-'));
    const build = streamEvents({ tableName: 'tidewater-local-records', keyAttributes: ['pk', 'sk'] });
    const file = join(dir, 'events.jsonl');
    await writeFile(
      file,
      `${JSON.stringify({ Records: [build.ttlDelete({ pk: 'a', sk: '1', expiresAt: 1 })] })}\n`,
    );
    const handlerFile = join(dir, 'failing.mjs');
    await writeFile(handlerFile, 'export async function handler() { throw new Error("boom"); }');
    const outFile = join(dir, 'on-failure.jsonl');
    captureOutput();
    const code = await main([
      'replay',
      file,
      '--handler',
      `${handlerFile}#handler`,
      '--no-progress',
      '--on-failure-out',
      outFile,
    ]);
    expect(code).toBe(EXIT.recordsDiscarded);
    const [line] = (await readFile(outFile, 'utf8')).trim().split('\n');
    const record = JSON.parse(line as string);
    expect(record.requestContext.condition).toBe('RetryAttemptsExhausted');
    expect(record.DDBStreamBatchInfo.batchSize).toBe(1);
  });
});
