import { ListObjectsV2Command } from '@aws-sdk/client-s3';
import { SQSClient } from '@aws-sdk/client-sqs';
import fc from 'fast-check';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { templateProblems } from '../../../scripts/package.js';
import { readArchiveRows } from '../../../src/archive.js';
import { createLambdaContext } from '../../../src/lambda/context.js';
import { createLocalResources } from '../../../src/local/config/resources.js';
import { streamEvents } from '../../../src/local/emulator/events.js';
import { LOCAL_CREDENTIALS, LOCAL_REGION } from '../../../src/local/servers/dynamodb-local.js';
import { toKinesisRecord } from '../../../src/records/kinesis-encode.js';
import { localClients, startLocalSqs, uniqueName } from '../../support/aws.js';

// The deployed entry point, composed exactly as in Lambda (module-level config from the
// environment serverless.yml sets), against the bucket the local runtime made from infra/.

type ArchiveModule = typeof import('../../../src/handlers/archive-ttl.js');

const deadLetterQueueUrl = 'https://sqs.us-east-1.amazonaws.com/000000000000/never-called';
let archiveModule: ArchiveModule;

beforeAll(async () => {
  vi.resetModules();
  vi.stubEnv('ARCHIVE_BUCKET', 'cold-start-bucket');
  vi.stubEnv('TTL_ATTRIBUTE', 'expiresAt');
  vi.stubEnv('DEAD_LETTER_QUEUE_URL', deadLetterQueueUrl);
  archiveModule = await import('../../../src/handlers/archive-ttl.js');
  vi.unstubAllEnvs();
});

async function archiveKeys(bucket: string): Promise<string[]> {
  const { s3 } = localClients();
  const listed = await s3.send(new ListObjectsV2Command({ Bucket: bucket }));
  return (listed.Contents ?? []).map((o) => o.Key ?? '').sort();
}

function invoke(handler: ArchiveModule['handler'], event: unknown) {
  const context = createLambdaContext({
    functionName: 'tidewater-test-archiveTtl',
    functionArn: 'arn:aws:lambda:us-east-1:000000000000:function:tidewater-test-archiveTtl',
    timeoutMs: 60_000,
    memoryLimitInMB: 512,
  });
  return handler(event as Parameters<ArchiveModule['handler']>[0], context);
}

/** The handler on a fresh local bucket from infra/, with these variables over the ones serverless.yml sets. */
async function archiveOnLocalBucket(stage: string, variables: Record<string, string>) {
  const { dynamodb, s3 } = localClients();
  const resources = await createLocalResources({ dynamodb, s3, stage: uniqueName(stage), env: {} });
  const config = archiveModule.readArchiveConfig({
    ARCHIVE_BUCKET: resources.bucket.name,
    ARCHIVE_PREFIX: resources.bucket.archivePrefix,
    TTL_ATTRIBUTE: resources.settings.ttlAttribute,
    DEAD_LETTER_QUEUE_URL: deadLetterQueueUrl,
    ...variables,
  });
  // No SQS server in the test run: the dead-letter queue must not be needed for good records.
  const sqs = new SQSClient({
    region: LOCAL_REGION,
    credentials: LOCAL_CREDENTIALS,
    endpoint: 'http://127.0.0.1:9',
  });
  return { handler: archiveModule.createArchiveHandler(config, { s3, sqs }), resources };
}

describe('archiveTtl handler', () => {
  it('builds at cold start from the environment serverless.yml sets', () => {
    expect(typeof archiveModule.handler).toBe('function');
  });

  it("gives its S3 and SQS clients the sinks' documented 8 attempts with standard retries", async () => {
    const { s3, sqs } = archiveModule.createArchiveClients();
    for (const client of [s3, sqs]) {
      expect(await client.config.maxAttempts()).toBe(8);
      expect(((await client.config.retryStrategy()) as { mode?: string }).mode).toBe('standard');
      client.destroy();
    }
  });

  it('archives TTL deletes under the prefix and, with all-deletes, user deletes beside them', async () => {
    const { handler, resources } = await archiveOnLocalBucket('h', { ARCHIVE_ROUTES: 'all-deletes' });

    const events = streamEvents({ tableName: resources.table.name, keyAttributes: ['pk', 'sk'] });
    const event = events.event(
      events.ttlDelete({ pk: 'order#1', sk: 'v1', expiresAt: 1_767_225_000, total: 12 }),
      events.userDelete({ pk: 'order#2', sk: 'v1', expiresAt: 1_867_225_000 }),
    );
    const response = await invoke(handler, event);
    expect(response).toEqual({ batchItemFailures: [] });

    const keys = await archiveKeys(resources.bucket.name);
    expect(keys.length).toBe(2);
    expect(keys.filter((k) => k.startsWith('archive/user-deletes/'))).toHaveLength(1);
    expect(
      keys.filter((k) => k.startsWith('archive/') && !k.startsWith('archive/user-deletes/')),
    ).toHaveLength(1);
  });
});

describe('archiveTtl with every-change', () => {
  it('keeps the TTL archive as it was and writes every change, TTL deletes included, to <prefix>changes/', async () => {
    const { handler, resources } = await archiveOnLocalBucket('c', { ARCHIVE_ROUTES: 'every-change' });
    const { s3 } = localClients();
    const events = streamEvents({ tableName: resources.table.name, keyAttributes: ['pk', 'sk'] });
    const before = { pk: 'order#1', sk: 'v1', expiresAt: 1_767_225_000, total: 12 };
    const after = { ...before, total: 13 };
    const changes = [
      events.insert(before),
      events.modify(before, after),
      events.userDelete({ pk: 'order#2', sk: 'v1' }),
      events.ttlDelete(after),
    ];
    expect(await invoke(handler, events.event(...changes))).toEqual({ batchItemFailures: [] });

    const keys = await archiveKeys(resources.bucket.name);
    const changeLog = keys.filter((k) => k.startsWith('archive/changes/'));
    expect(changeLog).toHaveLength(1);
    expect(keys.filter((k) => !k.startsWith('archive/changes/'))).toHaveLength(1);
    const rows: { kind: string; oldImage?: unknown; newImage?: unknown }[] = [];
    for await (const row of readArchiveRows({
      client: s3,
      bucket: resources.bucket.name,
      prefix: 'archive/changes/',
      table: resources.table.name,
      from: 0,
      to: Date.now() + 86_400_000,
    }))
      rows.push(row);
    expect(rows.map((r) => [r.kind, r.oldImage !== undefined, r.newImage !== undefined])).toEqual([
      ['insert', false, true],
      ['modify', true, true],
      ['user-delete', true, false],
      ['ttl-delete', true, false],
    ]);
  });
});

describe('archiveTtl on the Kinesis variant (EVENT_SOURCE kinesis, infra/kinesis.yml)', () => {
  it('archives a TTL delete from the Kinesis copy of the change and refuses a DynamoDB stream batch', async () => {
    const { handler, resources } = await archiveOnLocalBucket('k', { EVENT_SOURCE: 'kinesis' });
    const events = streamEvents({ tableName: resources.table.name, keyAttributes: ['pk', 'sk'] });
    const expired = events.ttlDelete({ pk: 'order#7', sk: 'v1', expiresAt: 1_767_225_000 });
    // The precision infra/table.yml deploys.
    const copy = toKinesisRecord(expired, {
      sequenceNumber: '49590338271490256608559692538361571095921575989136588898',
      tableName: resources.table.name,
      precision: 'MICROSECOND',
    });
    expect(await invoke(handler, { Records: [copy] })).toEqual({ batchItemFailures: [] });
    const keys = await archiveKeys(resources.bucket.name);
    expect(keys).toHaveLength(1);
    expect(keys[0]?.startsWith('archive/')).toBe(true);

    await expect(invoke(handler, events.event(expired))).rejects.toThrow(
      expect.objectContaining({ name: 'EventSourceMismatchError' }),
    );
  });
});

describe('archiveTtl dead letters', () => {
  it('keeps a poison record too large for an SQS message: stored in the bucket, pointed at from the queue', async () => {
    const { dynamodb, s3 } = localClients();
    const { sqs, server, stop } = await startLocalSqs();
    try {
      const stage = uniqueName('dl');
      const resources = await createLocalResources({ dynamodb, s3, sqs, stage, env: {} });
      const queue = resources.queues?.DeadLetterQueue;
      expect(queue).toBeDefined();
      const config = archiveModule.readArchiveConfig({
        ARCHIVE_BUCKET: resources.bucket.name,
        ARCHIVE_PREFIX: resources.bucket.archivePrefix,
        TTL_ATTRIBUTE: resources.settings.ttlAttribute,
        DEAD_LETTER_QUEUE_URL: queue!.url,
        DEAD_LETTER_OVERFLOW_PREFIX: resources.settings.deadLetterPrefix,
      });
      const handler = archiveModule.createArchiveHandler(config, { s3, sqs });

      // An INSERT reaches the function only if the filter and the routes disagree; the handler then
      // dead-letters it. Its image (a near-400 KB item) makes the entry larger than an SQS message.
      const events = streamEvents({ tableName: resources.table.name, keyAttributes: ['pk', 'sk'] });
      const big = events.insert({ pk: 'order#9', sk: 'v1', blob: 'x'.repeat(300_000) });
      const small = events.insert({ pk: 'order#10', sk: 'v1' });
      const response = await invoke(handler, events.event(big, small));
      expect(response).toEqual({ batchItemFailures: [] });

      const keys = await archiveKeys(resources.bucket.name);
      expect(keys).toHaveLength(1);
      expect(keys[0]).toMatch(/^dead-letter\/reason=[^/]+\/[^/]+\.json$/);
      const bodies = server.messages(queue!.name).map((m) => JSON.parse(m.body) as Record<string, unknown>);
      expect(bodies).toHaveLength(2);
      const pointer = bodies.find((b) => b.type === 'tidewater.dead-letter.pointer');
      expect(pointer).toMatchObject({ bucket: resources.bucket.name, key: keys[0], eventID: big.eventID });
      const inline = bodies.find((b) => b !== pointer) as { record?: { eventID?: string } };
      expect(inline.record?.eventID).toBe(small.eventID);
    } finally {
      await stop();
    }
  });
});

describe('readArchiveConfig', () => {
  const valid = {
    ARCHIVE_BUCKET: 'b',
    TTL_ATTRIBUTE: 'expiresAt',
    DEAD_LETTER_QUEUE_URL: deadLetterQueueUrl,
  };

  it('fills the defaults serverless.yml would set', () => {
    expect(archiveModule.readArchiveConfig(valid)).toEqual({
      bucket: 'b',
      prefix: 'archive/',
      storageClass: 'STANDARD',
      ttlAttribute: 'expiresAt',
      routes: 'ttl-deletes',
      deadLetterQueueUrl,
      deadLetterOverflowPrefix: 'dead-letter/',
      maxRecordAgeSeconds: undefined,
      source: 'dynamodb-stream',
    });
    expect(archiveModule.readArchiveConfig({ ...valid, EVENT_SOURCE: 'kinesis' }).source).toBe('kinesis');
  });

  const variable = (name: string) => `archiveTtl: environment variable '${name}'`;
  it.each([
    [{ ARCHIVE_BUCKET: '' }, `${variable('ARCHIVE_BUCKET')} is required`],
    [{ TTL_ATTRIBUTE: undefined }, `${variable('TTL_ATTRIBUTE')} is required`],
    [
      { DEAD_LETTER_QUEUE_URL: 'arn:aws:sqs:us-east-1:1:q' },
      `${variable('DEAD_LETTER_QUEUE_URL')} must be a queue URL (https://…), not a name or ARN`,
    ],
    [{ STORAGE_CLASS: 'GLACER' }, `${variable('STORAGE_CLASS')} must be one of 'STANDARD', 'STANDARD_IA'`],
    [
      { ARCHIVE_ROUTES: 'ttl' },
      `${variable('ARCHIVE_ROUTES')} must be one of 'ttl-deletes', 'all-deletes', 'every-change', got the string "ttl"`,
    ],
    [
      { EVENT_SOURCE: 'dynamodb' },
      `${variable('EVENT_SOURCE')} must be one of 'dynamodb-stream', 'kinesis', got the string "dynamodb"`,
    ],
    [
      { MAX_RECORD_AGE_SECONDS: '1.5' },
      `${variable('MAX_RECORD_AGE_SECONDS')} must be an integer in [1, ∞), got number 1.5`,
    ],
    // Each prefix ends the role's grant <bucket>/<prefix>*: empty would be the whole bucket, `*` or
    // `?` widen it, a leading `/` misses the keys the sinks write, no final `/` reaches siblings.
    [
      { DEAD_LETTER_OVERFLOW_PREFIX: '' },
      `${variable('DEAD_LETTER_OVERFLOW_PREFIX')} must be one or more segments`,
    ],
    [{ DEAD_LETTER_OVERFLOW_PREFIX: 'dead-letter' }, 'got the string "dead-letter"'],
    [{ DEAD_LETTER_OVERFLOW_PREFIX: '/dead-letter/' }, 'got the string "/dead-letter/"'],
    [{ DEAD_LETTER_OVERFLOW_PREFIX: 'dead-*/' }, 'got the string "dead-*/"'],
    [{ DEAD_LETTER_OVERFLOW_PREFIX: 'dead?/' }, 'got the string "dead?/"'],
    [{ ARCHIVE_PREFIX: '' }, `${variable('ARCHIVE_PREFIX')} must be one or more segments`],
    [{ ARCHIVE_PREFIX: 'archive/*' }, `${variable('ARCHIVE_PREFIX')} must be one or more segments`],
  ])('rejects %o with a HandlerConfigError naming the variable', (change, message) => {
    const attempt = () => archiveModule.readArchiveConfig({ ...valid, ...change });
    expect(attempt).toThrow(archiveModule.HandlerConfigError);
    expect(attempt).toThrow(message);
    expect(attempt).toThrow(expect.objectContaining({ variable: Object.keys(change)[0] }));
  });

  it('accepts exactly the key prefixes `npm run package` accepts (one rule for both)', () => {
    const segment = fc.stringMatching(/^[A-Za-z0-9._=-]{1,8}$/);
    const prefix = fc.oneof(
      fc.array(segment, { minLength: 1, maxLength: 3 }).map((parts) => `${parts.join('/')}/`),
      fc.string({ maxLength: 12 }),
      fc.constantFrom('', '/', '*', 'a/*', 'a?/', '/a/', 'a', 'a//b/', ' a/'),
    );
    fc.assert(
      fc.property(prefix, (value) => {
        const packaged: string[] = templateProblems(
          packagedTemplate({ ARCHIVE_PREFIX: 'archive/', DEAD_LETTER_OVERFLOW_PREFIX: value }),
        );
        const packageRefuses = packaged.some((p) => p.startsWith('deadLetterPrefix is '));
        let coldStartRefuses = false;
        try {
          archiveModule.readArchiveConfig({ ...valid, DEAD_LETTER_OVERFLOW_PREFIX: value });
        } catch (error) {
          if (!(error instanceof archiveModule.HandlerConfigError)) throw error;
          coldStartRefuses = true;
        }
        expect(coldStartRefuses, JSON.stringify(value)).toBe(packageRefuses);
      }),
    );
  });

  it('fails the cold start, not the first batch, when the environment is incomplete', async () => {
    vi.resetModules();
    vi.stubEnv('ARCHIVE_BUCKET', '');
    try {
      await expect(import('../../../src/handlers/archive-ttl.js')).rejects.toMatchObject({
        name: 'HandlerConfigError',
        variable: 'ARCHIVE_BUCKET',
      });
    } finally {
      vi.unstubAllEnvs();
    }
  });

  it('fails the cold start on an invalid dead-letter prefix, naming the variable', async () => {
    vi.resetModules();
    vi.stubEnv('ARCHIVE_BUCKET', 'cold-start-bucket');
    vi.stubEnv('TTL_ATTRIBUTE', 'expiresAt');
    vi.stubEnv('DEAD_LETTER_QUEUE_URL', deadLetterQueueUrl);
    vi.stubEnv('DEAD_LETTER_OVERFLOW_PREFIX', '');
    try {
      await expect(import('../../../src/handlers/archive-ttl.js')).rejects.toMatchObject({
        name: 'HandlerConfigError',
        variable: 'DEAD_LETTER_OVERFLOW_PREFIX',
      });
    } finally {
      vi.unstubAllEnvs();
    }
  });
});

/** The archive parts of a packaged template that `npm run package` checks, with these variables. */
function packagedTemplate(variables: Record<string, string>) {
  const transition = (storageClass: string, days: number) => ({
    StorageClass: storageClass,
    TransitionInDays: days,
  });
  return {
    Resources: {
      ArchiveTtlLambdaFunction: { Properties: { Environment: { Variables: variables } } },
      ArchiveBucket: {
        Properties: {
          LifecycleConfiguration: {
            Rules: [
              {
                Id: 'archive-to-glacier',
                Transitions: [transition('GLACIER', 30), transition('DEEP_ARCHIVE', 180)],
                NoncurrentVersionTransitions: [transition('GLACIER', 30)],
                NoncurrentVersionExpiration: { NoncurrentDays: 365 },
              },
            ],
          },
        },
      },
    },
  };
}
