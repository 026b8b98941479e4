// biome-ignore-all lint/suspicious/noTemplateCurlyInString: serverless variables and generated TypeScript, not template literals
import { mkdir, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, inject, it, vi } from 'vitest';
import { EXIT } from '../../../src/cli/exit-codes.js';
import { main } from '../../../src/cli/program.js';
import { streamEvents } from '../../../src/local/emulator/events.js';

/** A service whose handler records the environment it sees at import (cold start) and per invocation. */
async function recordingService(): Promise<{ dir: string; events: string; seen: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'tidewater-replay-env-'));
  const seen = join(dir, 'seen.jsonl');
  await writeFile(
    join(dir, 'serverless.yml'),
    [
      'service: envcheck',
      'provider:',
      '  name: aws',
      '  environment:',
      '    SHARED: from-provider',
      '    OVERRIDDEN: from-provider',
      '    STAGE_NAME: ${sls:stage}',
      'functions:',
      '  recorder:',
      '    handler: handlers/recorder.handler',
      '    environment:',
      '      OVERRIDDEN: from-function',
      '      TABLE:',
      '        Ref: Table',
      '      BUCKET_ARN:',
      '        Fn::GetAtt: [Bucket, Arn]',
      '      OVERRIDABLE:',
      '        Ref: Bucket',
      '      STREAM:',
      '        Fn::GetAtt: [Table, StreamArn]',
      '      AWS_ENDPOINT_URL_S3: https://s3.us-east-1.amazonaws.com',
      // ${AWS::Region} and ${Table} are Fn::Sub's, not serverless variables (serverless leaves them too).
      "      SUBBED: !Sub '${Table}@${AWS::Region}'",
      '    events:',
      '      - stream:',
      '          arn:',
      '            Fn::GetAtt: [Table, StreamArn]',
      '          maximumRetryAttempts: 0',
      'resources:',
      '  Resources:',
      '    Table:',
      '      Type: AWS::DynamoDB::Table',
      '      Properties:',
      '        TableName: envcheck-${sls:stage}-items',
      '        AttributeDefinitions: [{ AttributeName: pk, AttributeType: S }]',
      '        KeySchema: [{ AttributeName: pk, KeyType: HASH }]',
      '        StreamSpecification: { StreamViewType: NEW_AND_OLD_IMAGES }',
      '    Bucket:',
      '      Type: AWS::S3::Bucket',
      '',
    ].join('\n'),
  );
  await mkdir(join(dir, 'handlers'));
  const names = [
    'SHARED',
    'OVERRIDDEN',
    'STAGE_NAME',
    'TABLE',
    'BUCKET_ARN',
    'OVERRIDABLE',
    'STREAM',
    'AWS_ENDPOINT_URL_S3',
    'SUBBED',
  ];
  await writeFile(
    join(dir, 'handlers', 'recorder.mjs'),
    `import { appendFileSync } from 'node:fs';
const pick = () => Object.fromEntries(${JSON.stringify(names)}.map((name) => [name, process.env[name] ?? null]));
appendFileSync(${JSON.stringify(seen)}, JSON.stringify({ at: 'import', env: pick() }) + '\\n');
export async function handler(event) {
  appendFileSync(${JSON.stringify(seen)}, JSON.stringify({ at: 'invoke', records: event.Records.length, env: pick() }) + '\\n');
  return { batchItemFailures: [] };
}
`,
  );
  const build = streamEvents({ tableName: 'envcheck-local-items' });
  const events = join(dir, 'events.jsonl');
  await writeFile(
    events,
    `${JSON.stringify({ Records: [build.insert({ pk: 'a' }), build.insert({ pk: 'b' })] })}\n`,
  );
  return { dir, events, seen };
}

async function seenLines(
  file: string,
): Promise<{ at: string; records?: number; env: Record<string, string | null> }[]> {
  return (await readFile(file, 'utf8'))
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line));
}

let err: string[];
beforeEach(() => {
  err = [];
  // replay needs local endpoints that answer (or --aws): the run's servers, which this handler never calls.
  vi.stubEnv('AWS_ENDPOINT_URL_DYNAMODB', inject('dynamoEndpoint'));
  vi.stubEnv('AWS_ENDPOINT_URL_S3', inject('dynamoEndpoint'));
  vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
  vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => {
    err.push(String(chunk));
    return true;
  });
});
afterEach(() => {
  vi.restoreAllMocks();
  vi.unstubAllEnvs();
  process.exitCode = undefined;
});

describe("tidewater replay: the function's environment", () => {
  it('applies provider.environment and the function environment, references resolved to the local names', async () => {
    const { dir, events, seen } = await recordingService();
    // A local endpoint in the shell wins over the AWS one serverless.yml sets.
    vi.stubEnv('AWS_ENDPOINT_URL_S3', inject('s3Endpoint'));
    vi.stubEnv('SHARED', undefined);
    vi.stubEnv('OVERRIDABLE', undefined);
    const code = await main(['replay', events, '-c', join(dir, 'serverless.yml'), '--no-progress']);
    expect(err.join('')).not.toMatch(/Error/);
    expect(code).toBe(EXIT.ok);
    const expected = {
      SHARED: 'from-provider',
      OVERRIDDEN: 'from-function',
      STAGE_NAME: 'local',
      TABLE: 'envcheck-local-items',
      BUCKET_ARN: 'arn:aws:s3:::envcheck-local-bucket',
      OVERRIDABLE: 'envcheck-local-bucket',
      // A stream ARN exists only once the table does: left unset, with a warning naming it.
      STREAM: null,
      AWS_ENDPOINT_URL_S3: inject('s3Endpoint'),
      SUBBED: 'envcheck-local-items@us-east-1',
    };
    expect(await seenLines(seen)).toEqual([
      { at: 'import', env: expected },
      { at: 'invoke', records: 2, env: expected },
    ]);
    expect(err.join('')).toMatch(/warning: recorder: environment STREAM is left unset \(.*StreamArn.*\)/);
    // The caller's environment is back as it was.
    expect(process.env.SHARED).toBeUndefined();
    expect(process.env.TABLE).toBeUndefined();
    expect(process.env.AWS_ENDPOINT_URL_S3).toBe(inject('s3Endpoint'));
  });

  it('takes a reference from the shell when it is set there, and applies the environment to --handler too', async () => {
    const { dir, events, seen } = await recordingService();
    vi.stubEnv('OVERRIDABLE', 'my-real-bucket');
    vi.stubEnv('STREAM', 'arn:aws:dynamodb:eu-west-1:123456789012:table/envcheck/stream/x');
    const code = await main([
      'replay',
      events,
      '-c',
      join(dir, 'serverless.yml'),
      '-f',
      'recorder',
      '--handler',
      `${join(dir, 'handlers', 'recorder.mjs')}#handler`,
      '--no-progress',
    ]);
    expect(code).toBe(EXIT.ok);
    const [imported] = await seenLines(seen);
    expect(imported?.env).toMatchObject({
      SHARED: 'from-provider',
      OVERRIDABLE: 'my-real-bucket',
      STREAM: 'arn:aws:dynamodb:eu-west-1:123456789012:table/envcheck/stream/x',
      TABLE: 'envcheck-local-items',
    });
    expect(err.join('')).not.toMatch(/left unset/);
  });

  it('picks the only stream function without -f, and names the choices when there are several', async () => {
    const { dir, events } = await recordingService();
    const file = join(dir, 'serverless.yml');
    expect(await main(['replay', events, '-c', file, '--no-progress'])).toBe(EXIT.ok);
    const text = await readFile(file, 'utf8');
    await writeFile(
      file,
      text.replace(
        'resources:',
        [
          '  second:',
          '    handler: handlers/recorder.handler',
          '    events:',
          '      - stream:',
          '          arn: { Fn::GetAtt: [Table, StreamArn] }',
          'resources:',
        ].join('\n'),
      ),
    );
    expect(await main(['replay', events, '-c', file, '--no-progress'])).toBe(EXIT.error);
    expect(err.join('')).toMatch(
      /several functions have a DynamoDB stream event; pick one with -f \(recorder, second\)/,
    );
  });
});
