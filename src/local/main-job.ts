import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { DeleteItemCommand, PutItemCommand, ScanCommand, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import { GetObjectCommand, HeadObjectCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
import { SQSClient } from '@aws-sdk/client-sqs';
import type { Context } from 'aws-lambda';
import { decodeArchiveObject } from '../archive.js';
import { type AttributeMap, checkTtl, marshall, type TtlCheck } from '../records/index.js';
import { assertOptions } from '../records/options.js';
import { VoteCounter } from '../votes/index.js';
import { SqsFailureDestination } from './destinations.js';
import { type EmulatorEvent, EventSourceMappingEmulator, type StreamHandler } from './emulator.js';
import { loadHandler } from './handler-loader.js';
import { createLambdaContext } from './lambda-context.js';
import { startLocalAws } from './local-aws.js';
import { StreamPoller } from './poller.js';
import { createLocalResources, type LocalResources } from './resources.js';
import { handlerFile, loadServerlessConfig, toEmulatorOptions } from './serverless-config.js';
import { startSqsServer } from './sqs-server.js';

/**
 * The main job: tidewater's own demo service, what `tidewater demo` (and `npm start` in the
 * repository) runs; the CLI's app, not package API. Everything real and local: DynamoDB Local, the S3 server
 * and an SQS server; the table, bucket and queues created from infra/; the archive function and
 * the aggregator loaded from serverless.yml and run through the event-source-mapping emulator
 * with the settings serverless.yml gives them; DynamoDB Local's own TTL deleting the items.
 */
export interface MainJobOptions {
  /** The project holding serverless.yml and infra/; default this package's root. */
  root?: string;
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

const OPTION_KEYS = [
  'root',
  'expiredItems',
  'liveItems',
  'userDeletes',
  'votes',
  'contestants',
  'timeoutMs',
  'log',
] as const;

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

export interface MainJobSummary {
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

export async function runMainJob(options: MainJobOptions = {}): Promise<MainJobSummary> {
  assertOptions(options, OPTION_KEYS, 'runMainJob');
  const started = Date.now();
  const root = options.root ?? PACKAGE_ROOT;
  const log = options.log ?? (() => undefined);
  const counts = {
    expired: options.expiredItems ?? 12,
    live: options.liveItems ?? 4,
    userDeletes: options.userDeletes ?? 5,
    votes: options.votes ?? 400,
  };
  const contestants = options.contestants ?? ['aurora', 'borealis', 'cirrus', 'delta'];
  const problems: string[] = [];

  log('starting DynamoDB Local, the S3 server and the SQS server');
  const checkpointDir = await mkdtemp(join(tmpdir(), 'tidewater-start-'));
  const servers = await Promise.allSettled([startLocalAws(), startSqsServer()]);
  const [awsResult, sqsResult] = servers;
  if (awsResult.status === 'rejected' || sqsResult.status === 'rejected') {
    // A server left listening would keep the process alive after the error (e.g. no Java).
    await Promise.all([
      ...servers.map((r) => (r.status === 'fulfilled' ? r.value.stop() : undefined)),
      rm(checkpointDir, { recursive: true, force: true }),
    ]);
    throw awsResult.status === 'rejected' ? awsResult.reason : (sqsResult as PromiseRejectedResult).reason;
  }
  const aws = awsResult.value;
  const sqsServer = sqsResult.value;
  const sqs = new SQSClient({
    endpoint: sqsServer.endpoint,
    region: aws.region,
    credentials: aws.credentials,
  });
  const abort = new AbortController();
  let polling: Promise<unknown> = Promise.resolve();
  let restoreEnv: () => void = () => undefined;
  try {
    // User deletes are archived too in the main job, so the routing shows; the rest is default.
    const env: Record<string, string | undefined> = {
      ...process.env,
      ...aws.env,
      AWS_ENDPOINT_URL_SQS: sqsServer.endpoint,
      TIDEWATER_ARCHIVE_ROUTES: 'all-deletes',
      TIDEWATER_DELETION_PROTECTION: 'false',
    };
    const stage = 'local';
    log('creating the table, bucket and queues from infra/');
    const resources = await createLocalResources({
      dynamodb: aws.dynamodb,
      s3: aws.s3,
      sqs,
      stage,
      env,
      infraDir: pathToFileURL(join(root, 'infra/')),
    });
    const config = await loadServerlessConfig({ file: join(root, 'serverless.yml'), stage, env });
    const archiveFn = await config.streamFunction('archiveTtl');
    if (!archiveFn) throw new Error('serverless.yml has no archiveTtl function with a stream event');
    const aggregateFn = (await config.get('functions.aggregateVotes')) as
      | { handler: string; environment?: Record<string, unknown>; timeout?: number; memorySize?: number }
      | undefined;
    if (!aggregateFn) throw new Error('serverless.yml has no aggregateVotes function');

    // Handlers read their settings, and the SDK its endpoints, from process.env: give them the
    // functions' environments (CloudFormation references pointed at the local resources) for the run.
    restoreEnv = replaceEnv({
      ...env,
      ...resolveEnvironment(aggregateFn.environment ?? {}, resources),
      ...resolveEnvironment(archiveFn.environment, resources),
    });
    // An installed package ships dist/ but not src/: handlerFile falls back to the built handlers.
    const handler = await loadHandler<StreamHandler>(
      handlerFile(archiveFn, { root }),
      archiveFn.handlerExport,
      {
        root,
      },
    );
    const dot = aggregateFn.handler.lastIndexOf('.');
    const aggregate = await loadHandler<(event: unknown, context: Context) => Promise<unknown>>(
      handlerFile(
        { handler: aggregateFn.handler, handlerModule: resolve(root, aggregateFn.handler.slice(0, dot)) },
        { root },
      ),
      aggregateFn.handler.slice(dot + 1),
      { root },
    );

    const stats = { invocations: 0, filteredOut: 0, partialFailures: 0, functionErrors: 0 };
    const onFailureQueue = resources.queues?.OnFailureQueue;
    const emulator = new EventSourceMappingEmulator({
      ...toEmulatorOptions(archiveFn, { region: aws.region }),
      handler,
      keepLog: false,
      ...(onFailureQueue ? { onFailure: new SqsFailureDestination(sqs, onFailureQueue.url) } : {}),
      onEvent: (event: EmulatorEvent) => {
        if (event.type === 'invoke') stats.invocations++;
        else if (event.type === 'filtered') stats.filteredOut++;
        else if (event.type === 'response' && event.outcome === 'partial-failure') stats.partialFailures++;
        else if (event.type === 'response' && event.outcome !== 'success') stats.functionErrors++;
      },
    });
    const poller = new StreamPoller({
      streams: aws.streams,
      streamArn: resources.table.streamArn,
      checkpointFile: join(checkpointDir, 'checkpoint.json'),
    });
    log(`polling ${resources.table.streamArn} into ${archiveFn.functionName}`);
    polling = poller.runEmulator(emulator, { signal: abort.signal });

    log('writing the workload');
    const ttlAttribute = resources.settings.ttlAttribute;
    const written = await writeWorkload(aws.dynamodb, resources.table.name, ttlAttribute, counts);
    const votes = await castVotes(resources, aws.dynamodb, contestants, counts.votes);

    log(`waiting for DynamoDB Local to TTL-delete ${counts.expired} items and for the archive`);
    const prefix = resources.bucket.archivePrefix;
    const deadline = Date.now() + (options.timeoutMs ?? 90_000);
    let objects: ArchivedObject[] = [];
    for (;;) {
      objects = await listArchive(aws.s3, resources.bucket.name, prefix);
      const { ttl, user } = tally(objects);
      if ((ttl >= counts.expired && user >= counts.userDeletes) || Date.now() > deadline) break;
      await new Promise((r) => setTimeout(r, 500));
    }
    abort.abort();
    await polling.catch(() => undefined);

    log('running the aggregator');
    const aggregation = await aggregate(
      {},
      createLambdaContext({
        functionName: 'aggregateVotes',
        functionArn: `arn:aws:lambda:${aws.region}:000000000000:function:aggregateVotes`,
        timeoutMs: Number(aggregateFn.timeout ?? (await config.get('provider.timeout')) ?? 6) * 1000,
        memoryLimitInMB: Number(aggregateFn.memorySize ?? (await config.get('provider.memorySize')) ?? 1024),
      }),
    );
    const counter = new VoteCounter({
      tableName: resources.table.name,
      poll: resources.settings.poll,
      dynamodb: aws.dynamodb,
    });
    const totals = await counter.getTotals({ consistentRead: true });

    const neverExpiring = await findNeverExpiring(aws.dynamodb, resources.table.name, ttlAttribute);
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
    const deadLetterQueue = resources.queues?.DeadLetterQueue;
    return {
      ok: problems.length === 0,
      problems,
      table: resources.table.name,
      bucket: resources.bucket.name,
      archivePrefix: prefix,
      written,
      archive: { objects, ttlDeletesArchived: ttl, userDeletesArchived: user },
      lambda: {
        functionName: archiveFn.functionName,
        ...stats,
        onFailureRecords: onFailureQueue ? sqsServer.messages(onFailureQueue.name).length : 0,
        deadLettered: deadLetterQueue ? sqsServer.messages(deadLetterQueue.name).length : 0,
      },
      neverExpiring,
      votes: { cast: votes.cast, duplicatesRejected: votes.duplicates, totals: totalRows, aggregation },
      elapsedMs: Date.now() - started,
    };
  } finally {
    abort.abort();
    await polling.catch(() => undefined);
    restoreEnv();
    sqs.destroy();
    await Promise.all([aws.stop(), sqsServer.stop(), rm(checkpointDir, { recursive: true, force: true })]);
  }
}

/** Replaces process.env with `env`; returns the function that puts the old one back. */
function replaceEnv(env: Record<string, string | undefined>): () => void {
  const saved = { ...process.env };
  const apply = (next: Record<string, string | undefined>) => {
    for (const key of Object.keys(process.env)) if (next[key] === undefined) delete process.env[key];
    for (const [key, value] of Object.entries(next)) if (value !== undefined) process.env[key] = value;
  };
  apply(env);
  return () => apply(saved);
}

/** serverless.yml environment values that are CloudFormation references, pointed at the local resources. */
function resolveEnvironment(
  environment: Record<string, unknown>,
  resources: LocalResources,
): Record<string, string> {
  const byLogicalId: Record<string, { ref: string; arn?: string; streamArn?: string }> = {
    RecordsTable: {
      ref: resources.table.name,
      arn: resources.table.arn,
      streamArn: resources.table.streamArn,
    },
    ArchiveBucket: { ref: resources.bucket.name, arn: `arn:aws:s3:::${resources.bucket.name}` },
  };
  for (const [id, queue] of Object.entries(resources.queues ?? {}))
    byLogicalId[id] = { ref: queue.url, arn: queue.arn };
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(environment)) {
    if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') {
      out[name] = String(value);
      continue;
    }
    const ref = (value as { Ref?: string }).Ref;
    const getAtt = (value as { 'Fn::GetAtt'?: [string, string] })['Fn::GetAtt'];
    const target = ref
      ? byLogicalId[ref]?.ref
      : getAtt
        ? byLogicalId[getAtt[0]]?.[getAtt[1] === 'StreamArn' ? 'streamArn' : 'arn']
        : undefined;
    if (target === undefined)
      throw new Error(`environment ${name}: cannot resolve ${JSON.stringify(value)} locally`);
    out[name] = target;
  }
  return out;
}

async function writeWorkload(
  dynamodb: import('@aws-sdk/client-dynamodb').DynamoDBClient,
  tableName: string,
  ttlAttribute: string,
  counts: { expired: number; live: number; userDeletes: number },
) {
  const now = Math.floor(Date.now() / 1000);
  const put = (item: Record<string, unknown>) =>
    dynamodb.send(
      new PutItemCommand({ TableName: tableName, Item: marshall(item) as AttributeMap as never }),
    );
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
        Key: marshall({ pk: `SESSION#live-${i}`, sk: 'LIVE' }) as never,
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
    await dynamodb.send(new DeleteItemCommand({ TableName: tableName, Key: marshall(key) as never }));
  }
  return {
    expired: counts.expired,
    live: counts.live,
    stringTtl: 1,
    millisecondTtl: 1,
    userDeletes: counts.userDeletes,
  };
}

async function castVotes(
  resources: LocalResources,
  dynamodb: import('@aws-sdk/client-dynamodb').DynamoDBClient,
  contestants: readonly string[],
  votes: number,
) {
  const counter = new VoteCounter({
    tableName: resources.table.name,
    poll: resources.settings.poll,
    dynamodb,
  });
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

async function listArchive(
  s3: import('@aws-sdk/client-s3').S3Client,
  bucket: string,
  prefix: string,
): Promise<ArchivedObject[]> {
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
  dynamodb: import('@aws-sdk/client-dynamodb').DynamoDBClient,
  tableName: string,
  ttlAttribute: string,
): Promise<NeverExpiringItem[]> {
  const found: NeverExpiringItem[] = [];
  let start: Record<string, import('@aws-sdk/client-dynamodb').AttributeValue> | undefined;
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
export function formatSummary(summary: MainJobSummary): string {
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
