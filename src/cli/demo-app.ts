import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  type AttributeValue,
  DeleteItemCommand,
  type DynamoDBClient,
  PutItemCommand,
  ScanCommand,
  UpdateItemCommand,
} from '@aws-sdk/client-dynamodb';
import { GetObjectCommand, HeadObjectCommand, ListObjectsV2Command, type S3Client } from '@aws-sdk/client-s3';
import { GetQueueAttributesCommand, type SQSClient } from '@aws-sdk/client-sqs';
import type { Context } from 'aws-lambda';
import { decodeArchiveObject } from '../archive.js';
import { defineOptions } from '../core/index.js';
import { createLambdaContext, lambdaFunctionArn } from '../lambda/context.js';
import { serverlessApp } from '../local/config/local-app.js';
import {
  type EmulatorEvent,
  handlerFile,
  loadHandler,
  loadServerlessConfig,
  type ServerlessConfig,
  ServerlessConfigError,
} from '../local/index.js';
import { LOCAL_ACCOUNT_ID } from '../local/servers/dynamodb-local.js';
import { overlayEnv } from '../local/servers/process-env.js';
import { type AttributeMap, checkTtl, marshall, type TtlCheck } from '../records/index.js';
import { VoteCounter } from '../votes/index.js';
import { streamFunctionOf } from './function-env.js';
import { startServers } from './local-servers.js';
import { prepareFunction, runFunction, serverEnvironment } from './local-service.js';

/**
 * The demo app: tidewater's own service, what `tidewater demo` (and `npm start` in the repository)
 * runs. Everything real and local: DynamoDB Local, the S3 server and an SQS server; the table,
 * bucket and queues from serverless.yml's resources (infra/); the archive function and the
 * aggregator loaded from serverless.yml and run through the event-source-mapping emulator with
 * the settings and environments serverless.yml gives them — the same path as `tidewater start` —
 * then a workload and a summary to check; DynamoDB Local's own TTL deleting the items.
 */
export interface DemoOptions {
  /** The project holding serverless.yml and infra/; default this package's root. */
  root?: string;
  /** The function archiving TTL deletes; default the only one with a DynamoDB stream event. */
  archiveFunction?: string;
  /** The function totalling the votes; default the only one with a schedule event and a POLL. */
  aggregateFunction?: string;
  /**
   * What serverless.yml's `${env:…}` reads; default process.env. The handlers run in this process
   * and read process.env, so their own environment is set there while they run, then put back.
   */
  env?: Readonly<Record<string, string | undefined>>;
  /** Items whose TTL has already passed (DynamoDB Local deletes them within seconds). */
  expiredItems?: number;
  /** Items with a TTL in the future: they stay. */
  liveItems?: number;
  /** Items written then deleted by the user. */
  userDeletes?: number;
  /** Votes cast, spread over `contestants`. */
  votes?: number;
  contestants?: readonly string[];
  /** How long to wait for every TTL delete to be archived. */
  timeoutMs?: number;
  /** Progress lines. */
  log?: (line: string) => void;
}

export interface ArchivedObject {
  key: string;
  storageClass: string;
  rows: number;
  kinds: Record<string, number>;
  bytes: number;
}

export interface NeverExpiringItem {
  pk: string;
  reason: string;
  message: string;
}

export interface DemoSummary {
  ok: boolean;
  /** What did not come out as expected; empty when ok. */
  problems: string[];
  table: string;
  bucket: string;
  archivePrefix: string;
  written: { expired: number; live: number; stringTtl: number; millisecondTtl: number; userDeletes: number };
  archive: {
    objects: ArchivedObject[];
    ttlDeletesArchived: number;
    userDeletesArchived: number;
  };
  lambda: {
    functionName: string;
    invocations: number;
    filteredOut: number;
    partialFailures: number;
    functionErrors: number;
    onFailureRecords: number;
    deadLettered: number;
  };
  neverExpiring: NeverExpiringItem[];
  votes: {
    cast: number;
    duplicatesRejected: number;
    totals: { contestant: string; total: string; expected: string }[];
    aggregation: unknown;
  };
  elapsedMs: number;
}

const PACKAGE_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const count = (min: number, value: number) => ({ kind: 'integer', min, default: value }) as const;

const readOptions = defineOptions<DemoOptions>()('runDemo', {
  root: { kind: 'nonEmptyString', default: PACKAGE_ROOT },
  archiveFunction: { kind: 'nonEmptyString' },
  aggregateFunction: { kind: 'nonEmptyString' },
  env: { kind: 'object' },
  expiredItems: count(0, 12),
  liveItems: count(0, 4),
  userDeletes: count(0, 5),
  votes: count(0, 400),
  contestants: {
    kind: 'custom',
    expected: 'a non-empty list of names',
    check: (value) => Array.isArray(value) && value.length > 0,
    default: ['aurora', 'borealis', 'cirrus', 'delta'],
  },
  timeoutMs: count(1, 90_000),
  log: { kind: 'function', default: () => undefined },
});

export async function runDemo(input: DemoOptions = {}): Promise<DemoSummary> {
  const options = readOptions(input);
  const { root, log, contestants } = options;
  const started = Date.now();
  const counts = {
    expired: options.expiredItems,
    live: options.liveItems,
    userDeletes: options.userDeletes,
    votes: options.votes,
  };
  const problems: string[] = [];

  // User deletes are archived too in the demo, so the routing shows; the archive reads the table's
  // DynamoDB stream whatever the shell's TIDEWATER_ARCHIVE_SOURCE (the demo starts no Kinesis
  // server; `tidewater start` runs the Kinesis variant); the rest is serverless.yml's.
  const config = await loadServerlessConfig({
    file: join(root, 'serverless.yml'),
    stage: 'local',
    env: {
      ...(options.env ?? process.env),
      TIDEWATER_ARCHIVE_SOURCE: 'dynamodb-stream',
      TIDEWATER_ARCHIVE_ROUTES: 'all-deletes',
      TIDEWATER_DELETION_PROTECTION: 'false',
    },
  });
  const app = await serverlessApp(config);
  const archiveFn = await streamFunctionOf(app, options.archiveFunction);
  const aggregateFn = await config.functionSettings(
    options.aggregateFunction ?? (await findAggregator(config)),
  );
  // An installed package ships dist/ but not src/: handlerFile falls back to the built handlers.
  handlerFile(archiveFn, { root });
  const aggregateFile = handlerFile(aggregateFn, { root });

  log('starting DynamoDB Local, the S3 server and the SQS server');
  const servers = await startServers();
  const { aws, sqs } = servers;
  const checkpointDir = await mkdtemp(join(tmpdir(), 'tidewater-demo-'));
  const abort = new AbortController();
  let polling: Promise<unknown> = Promise.resolve();
  let restoreEnv = (): void => undefined;
  try {
    log("creating the table, bucket and queues from serverless.yml's resources (infra/)");
    const resources = await app.createResources({ dynamodb: aws.dynamodb, s3: aws.s3, sqs });
    const streamArn = resources.streamArnOf(archiveFn);
    const table = resources.tables.find((t) => t.streamArn !== undefined && t.streamArn === streamArn);
    if (!streamArn || !table?.ttlAttribute)
      throw new ServerlessConfigError(
        config.file,
        `function '${archiveFn.key}' must read the stream of a table with TTL that resources: declares`,
      );
    const archiveEnv = resources.environmentOf(archiveFn);
    const aggregateEnv = resources.environmentOf(aggregateFn);
    const setting = (env: Record<string, string>, fn: { key: string }, name: string): string => {
      const value = env[name];
      if (value === undefined)
        throw new ServerlessConfigError(
          config.file,
          `function '${fn.key}' has no environment variable ${name}`,
        );
      return value;
    };
    const bucket = setting(archiveEnv, archiveFn, 'ARCHIVE_BUCKET');
    const prefix = setting(archiveEnv, archiveFn, 'ARCHIVE_PREFIX');
    const poll = setting(aggregateEnv, aggregateFn, 'POLL');
    const deadLetterQueueUrl = archiveEnv.DEAD_LETTER_QUEUE_URL;

    // The archive function as `tidewater start` runs it: prepared (stream, environment, handler,
    // on-failure destination) and polled by the same functions; its lines are start's, not the demo's.
    const quiet = () => undefined;
    const localEnv = serverEnvironment(servers);
    const running = await prepareFunction(archiveFn, resources, localEnv, servers, app, quiet);
    if (!running)
      throw new ServerlessConfigError(
        config.file,
        `function '${archiveFn.key}': its stream event is disabled`,
      );
    // Handlers read their settings, and the SDK its endpoints, from process.env, as in Lambda:
    // the functions' environments are set there for the run (the local endpoints win), then put back.
    restoreEnv = overlayEnv({ ...aggregateEnv, ...archiveEnv, ...localEnv });
    const aggregate = await loadHandler<(event: unknown, context: Context) => Promise<unknown>>(
      aggregateFile,
      aggregateFn.handlerExport,
      { root },
    );

    const stats = { invocations: 0, filteredOut: 0, partialFailures: 0, functionErrors: 0 };
    log(`polling ${streamArn} into ${archiveFn.functionName}`);
    polling = runFunction(running, servers, {
      checkpointFile: join(checkpointDir, 'checkpoint.json'),
      signal: abort.signal,
      log: quiet,
      stats: { invocations: 0, discarded: 0 },
      onEvent: (event: EmulatorEvent) => {
        if (event.type === 'invoke') stats.invocations++;
        else if (event.type === 'filtered') stats.filteredOut++;
        else if (event.type === 'response' && event.outcome === 'partial-failure') stats.partialFailures++;
        else if (event.type === 'response' && event.outcome !== 'success') stats.functionErrors++;
      },
    });

    log('writing the workload');
    const written = await writeWorkload(aws.dynamodb, table.name, table.ttlAttribute, counts);
    const counter = new VoteCounter({ tableName: table.name, poll, dynamodb: aws.dynamodb });
    const votes = await castVotes(counter, contestants, counts.votes);

    log(`waiting for DynamoDB Local to TTL-delete ${counts.expired} items and for the archive`);
    const deadline = Date.now() + options.timeoutMs;
    let objects: ArchivedObject[] = [];
    for (;;) {
      objects = await listArchive(aws.s3, bucket, prefix);
      const { ttl, user } = tally(objects);
      if ((ttl >= counts.expired && user >= counts.userDeletes) || Date.now() > deadline) break;
      await new Promise((r) => setTimeout(r, 500));
    }
    abort.abort();
    await polling.catch(() => undefined);

    log(`running ${aggregateFn.functionName}`);
    const aggregation = await aggregate(
      {},
      createLambdaContext({
        functionName: aggregateFn.functionName,
        functionArn: lambdaFunctionArn(aws.region, LOCAL_ACCOUNT_ID, aggregateFn.functionName),
        timeoutMs: aggregateFn.timeoutSeconds * 1000,
        memoryLimitInMB: aggregateFn.memorySize,
      }),
    );
    const totals = await counter.getTotals({ consistentRead: true });

    const neverExpiring = await findNeverExpiring(aws.dynamodb, table.name, table.ttlAttribute);
    const { ttl, user } = tally(objects);
    if (ttl !== counts.expired) problems.push(`archived ${ttl} TTL deletes, expected ${counts.expired}`);
    if (user !== counts.userDeletes)
      problems.push(`archived ${user} user deletes, expected ${counts.userDeletes}`);
    if (neverExpiring.length !== written.stringTtl + written.millisecondTtl) {
      problems.push(
        `flagged ${neverExpiring.length} never-expiring items, expected ${written.stringTtl + written.millisecondTtl}`,
      );
    }
    const totalRows = contestants.map((contestant) => {
      const expected = votes.expected.get(contestant) ?? 0n;
      const total = totals.find((t) => t.contestant === contestant)?.total ?? 0n;
      if (total !== expected) problems.push(`${contestant}: total ${total}, expected ${expected}`);
      return { contestant, total: total.toString(), expected: expected.toString() };
    });
    return {
      ok: problems.length === 0,
      problems,
      table: table.name,
      bucket,
      archivePrefix: prefix,
      written,
      archive: { objects, ttlDeletesArchived: ttl, userDeletesArchived: user },
      lambda: {
        functionName: archiveFn.functionName,
        ...stats,
        onFailureRecords: await queueLength(sqs, running.onFailureQueue?.url),
        deadLettered: await queueLength(sqs, deadLetterQueueUrl),
      },
      neverExpiring,
      votes: { cast: votes.cast, duplicatesRejected: votes.duplicates, totals: totalRows, aggregation },
      elapsedMs: Date.now() - started,
    };
  } finally {
    abort.abort();
    await polling.catch(() => undefined);
    restoreEnv();
    await Promise.all([servers.stop(), rm(checkpointDir, { recursive: true, force: true })]);
  }
}

/** The vote aggregator: the function serverless.yml runs on a schedule with a poll to total (POLL). */
async function findAggregator(config: ServerlessConfig): Promise<string> {
  const found: string[] = [];
  for (const key of await config.functionsWithEvent('schedule'))
    if ((await config.environmentOf(key)).POLL !== undefined) found.push(key);
  if (found.length === 1) return found[0] as string;
  throw new ServerlessConfigError(
    config.file,
    found.length === 0
      ? 'no function runs on a schedule with a POLL to total (the vote aggregator)'
      : `several scheduled functions have a POLL; name the aggregator (${found.join(', ')})`,
  );
}

/** Messages in a queue, received or not; 0 without a queue. */
async function queueLength(sqs: SQSClient, queueUrl: string | undefined): Promise<number> {
  if (!queueUrl) return 0;
  const { Attributes: attributes = {} } = await sqs.send(
    new GetQueueAttributesCommand({
      QueueUrl: queueUrl,
      AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'],
    }),
  );
  return (
    Number(attributes.ApproximateNumberOfMessages ?? 0) +
    Number(attributes.ApproximateNumberOfMessagesNotVisible ?? 0)
  );
}

async function writeWorkload(
  dynamodb: DynamoDBClient,
  tableName: string,
  ttlAttribute: string,
  counts: { expired: number; live: number; userDeletes: number },
) {
  const now = Math.floor(Date.now() / 1000);
  const put = (item: Record<string, unknown>) =>
    dynamodb.send(new PutItemCommand({ TableName: tableName, Item: marshall(item) }));
  const body = (i: number) => ({
    note: `item ${i}`,
    // A 38-digit number and binary: the archive must keep both exactly.
    ledger: 12345678901234567890123456789012345678n,
    blob: new Uint8Array([0, 1, 2, 253, 254, 255]),
    tags: new Set(['archived', `n${i}`]),
  });
  for (let i = 0; i < counts.expired; i++) {
    await put({ pk: `SESSION#${i}`, sk: 'EXPIRED', [ttlAttribute]: now - 3600 - i, ...body(i) });
  }
  for (let i = 0; i < counts.live; i++) {
    await put({ pk: `SESSION#live-${i}`, sk: 'LIVE', [ttlAttribute]: now + 86_400, ...body(i) });
    await dynamodb.send(
      new UpdateItemCommand({
        TableName: tableName,
        Key: marshall({ pk: `SESSION#live-${i}`, sk: 'LIVE' }),
        UpdateExpression: 'SET note = :n',
        ExpressionAttributeValues: { ':n': { S: 'touched' } },
      }),
    );
  }
  // TTL is never validated: a string or a millisecond value is accepted and never expires.
  await put({ pk: 'SESSION#string-ttl', sk: 'BROKEN', [ttlAttribute]: String(now - 3600), ...body(0) });
  await put({ pk: 'SESSION#millis-ttl', sk: 'BROKEN', [ttlAttribute]: Date.now() - 3_600_000, ...body(0) });
  for (let i = 0; i < counts.userDeletes; i++) {
    const key = { pk: `ORDER#${i}`, sk: 'CANCELLED' };
    await put({ ...key, [ttlAttribute]: now + 86_400, ...body(i) });
    await dynamodb.send(new DeleteItemCommand({ TableName: tableName, Key: marshall(key) }));
  }
  return {
    expired: counts.expired,
    live: counts.live,
    stringTtl: 1,
    millisecondTtl: 1,
    userDeletes: counts.userDeletes,
  };
}

async function castVotes(counter: VoteCounter, contestants: readonly string[], votes: number) {
  for (const contestant of contestants) await counter.registry.register(contestant);
  const expected = new Map<string, bigint>();
  let duplicates = 0;
  for (let i = 0; i < votes; i++) {
    const contestant = contestants[i % contestants.length] as string;
    // Every tenth vote is exactly-once and retried: it must count once.
    if (i % 10 === 0) {
      const voterId = `voter-${i}`;
      await counter.castVote(contestant, 1, { voterId });
      const again = await counter.castVote(contestant, 1, { voterId });
      if (again.status === 'duplicate') duplicates++;
    } else {
      await counter.castVote(contestant);
    }
    expected.set(contestant, (expected.get(contestant) ?? 0n) + 1n);
  }
  return { cast: votes, duplicates, expected };
}

async function listArchive(s3: S3Client, bucket: string, prefix: string): Promise<ArchivedObject[]> {
  const objects: ArchivedObject[] = [];
  let token: string | undefined;
  do {
    const page = await s3.send(
      new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix, ContinuationToken: token }),
    );
    for (const entry of page.Contents ?? []) {
      const key = entry.Key as string;
      const [head, body] = await Promise.all([
        s3.send(new HeadObjectCommand({ Bucket: bucket, Key: key })),
        s3
          .send(new GetObjectCommand({ Bucket: bucket, Key: key }))
          .then((r) => r.Body?.transformToByteArray()),
      ]);
      const rows = decodeArchiveObject(body ?? new Uint8Array(), key);
      const kinds: Record<string, number> = {};
      for (const row of rows) kinds[row.kind] = (kinds[row.kind] ?? 0) + 1;
      objects.push({
        key,
        storageClass: head.StorageClass ?? 'STANDARD',
        rows: rows.length,
        kinds,
        bytes: entry.Size ?? 0,
      });
    }
    token = page.NextContinuationToken;
  } while (token);
  return objects;
}

function tally(objects: readonly ArchivedObject[]) {
  let ttl = 0;
  let user = 0;
  for (const object of objects) {
    ttl += object.kinds['ttl-delete'] ?? 0;
    user += object.kinds['user-delete'] ?? 0;
  }
  return { ttl, user };
}

async function findNeverExpiring(
  dynamodb: DynamoDBClient,
  tableName: string,
  ttlAttribute: string,
): Promise<NeverExpiringItem[]> {
  const found: NeverExpiringItem[] = [];
  let start: Record<string, AttributeValue> | undefined;
  do {
    const page = await dynamodb.send(
      new ScanCommand({
        TableName: tableName,
        ExclusiveStartKey: start,
        FilterExpression: 'attribute_exists(#t)',
        ExpressionAttributeNames: { '#t': ttlAttribute },
      }),
    );
    for (const item of page.Items ?? []) {
      const check: TtlCheck = checkTtl(item as AttributeMap, ttlAttribute);
      if (!check.expires) found.push({ pk: item.pk?.S ?? '?', reason: check.reason, message: check.message });
    }
    start = page.LastEvaluatedKey;
  } while (start);
  return found.sort((a, b) => a.pk.localeCompare(b.pk));
}

/** The summary a person reads after `npm start`. */
export function formatDemoSummary(summary: DemoSummary): string {
  const lines: string[] = [];
  const { archive, lambda, votes } = summary;
  lines.push(
    '',
    `tidewater demo ${summary.ok ? 'OK' : 'FAILED'} in ${(summary.elapsedMs / 1000).toFixed(1)} s`,
    '',
  );
  lines.push(
    `Table ${summary.table}: wrote ${summary.written.expired} items with a past TTL, ${summary.written.live} live items,`,
  );
  lines.push(
    `  ${summary.written.stringTtl} with a string TTL, ${summary.written.millisecondTtl} with a millisecond TTL, and deleted ${summary.written.userDeletes} by hand.`,
  );
  lines.push('');
  lines.push(
    `Archive s3://${summary.bucket}/${summary.archivePrefix}: ${archive.ttlDeletesArchived} TTL deletes, ${archive.userDeletesArchived} user deletes in ${archive.objects.length} objects`,
  );
  for (const object of archive.objects) {
    const kinds = Object.entries(object.kinds)
      .map(([k, n]) => `${n} ${k}`)
      .join(', ');
    lines.push(
      `  ${object.key}  [${object.storageClass}, ${object.bytes} B gzip, ${object.rows} ${object.rows === 1 ? 'row' : 'rows'}: ${kinds}]`,
    );
  }
  lines.push('');
  lines.push(`Lambda ${lambda.functionName} (emulated with serverless.yml's stream settings):`);
  lines.push(
    `  ${lambda.invocations} invocations, ${lambda.filteredOut} records dropped by the filter, ${lambda.partialFailures} partial failures, ${lambda.functionErrors} function errors,`,
  );
  lines.push(`  ${lambda.onFailureRecords} on-failure records, ${lambda.deadLettered} dead-lettered records`);
  lines.push('');
  lines.push(`Items whose TTL will never expire (${summary.neverExpiring.length}):`);
  for (const item of summary.neverExpiring) lines.push(`  ${item.pk}: ${item.reason} (${item.message})`);
  lines.push('');
  lines.push(
    `Votes: ${votes.cast} cast (${votes.duplicatesRejected} retried exactly-once votes rejected as duplicates); totals after aggregation:`,
  );
  for (const row of votes.totals)
    lines.push(`  ${row.contestant.padEnd(12)} ${row.total.padStart(6)}  (expected ${row.expected})`);
  if (summary.problems.length) {
    lines.push('', 'Problems:');
    for (const problem of summary.problems) lines.push(`  - ${problem}`);
  }
  lines.push('');
  return lines.join('\n');
}
