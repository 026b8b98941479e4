// The service end to end, locally: DynamoDB Local's real stream (its own TTL sweep makes the TTL
// deletes) read the way Lambda reads it, through the event source mapping serverless.yml
// configures, into the handler, and the archive read back with tidewater's reader.
import {
  CreateTableCommand,
  DeleteItemCommand,
  DescribeTableCommand,
  PutItemCommand,
  UpdateTimeToLiveCommand,
} from '@aws-sdk/client-dynamodb';
import { ListObjectsV2Command } from '@aws-sdk/client-s3';
import { marshall, type TtlDeleteRecord } from 'tidewater';
import { readArchive } from 'tidewater/archive';
import {
  EventSourceMappingEmulator,
  loadServerlessConfig,
  type StreamHandler,
  StreamPoller,
  toEmulatorOptions,
} from 'tidewater/local';
import { useLocalAws } from 'tidewater/local/vitest';
import { beforeAll, expect, it } from 'vitest';

const BUCKET = 'orders-archive';
const TABLE = 'orders';
const local = useLocalAws({ buckets: [BUCKET] });

let handler: StreamHandler;
let streamArn: string;

beforeAll(async () => {
  const { dynamodb } = local.current;
  await dynamodb.send(
    new CreateTableCommand({
      TableName: TABLE,
      BillingMode: 'PAY_PER_REQUEST',
      AttributeDefinitions: [{ AttributeName: 'pk', AttributeType: 'S' }],
      KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }],
      StreamSpecification: { StreamEnabled: true, StreamViewType: 'NEW_AND_OLD_IMAGES' },
    }),
  );
  await dynamodb.send(
    new UpdateTimeToLiveCommand({
      TableName: TABLE,
      TimeToLiveSpecification: { AttributeName: 'expiresAt', Enabled: true },
    }),
  );
  const table = await dynamodb.send(new DescribeTableCommand({ TableName: TABLE }));
  streamArn = table.Table!.LatestStreamArn!;
  // The handler reads its settings at import, as a deployed one does at cold start: set the
  // environment first (useLocalAws has set the endpoints), then import it.
  process.env.ARCHIVE_BUCKET = BUCKET;
  process.env.AUDIT_PREFIX = 'audit/';
  ({ handler } = await import('../src/handlers/archive.js'));
});

it('archives TTL-expired orders losslessly and audits user deletes, with serverless.yml settings', async () => {
  const { dynamodb, s3, streams } = local.current;
  const config = await loadServerlessConfig({ file: 'serverless.yml', stage: 'test' });
  const archiveFunction = await config.streamFunction('archive');
  expect(archiveFunction).toBeDefined();
  const mapping = toEmulatorOptions(archiveFunction!);
  expect(mapping).toMatchObject({ batchSize: 100, maximumRetryAttempts: 3, reportBatchItemFailures: true });

  const invocations: string[] = [];
  const emulator = new EventSourceMappingEmulator({
    ...mapping,
    handler,
    onEvent: (event) => {
      if (event.type === 'response') invocations.push(event.outcome);
    },
  });
  const poller = new StreamPoller({ streams, streamArn, startingPosition: 'TRIM_HORIZON' });
  const abort = new AbortController();
  const polling = poller.runEmulator(emulator, { signal: abort.signal });

  const past = Math.floor(Date.now() / 1000) - 3600;
  const expired = ['order-1', 'order-2', 'order-3'];
  for (const pk of expired) {
    const item = {
      pk,
      expiresAt: past,
      // 38 significant digits and binary: what a JS number or a base64 string would lose.
      totalMicros: 12345678901234567890123456789012345678n,
      receipt: new Uint8Array([0, 1, 2, 253, 254, 255]),
      tags: new Set(['gift', 'priority']),
    };
    await dynamodb.send(new PutItemCommand({ TableName: TABLE, Item: marshall(item, { binary: 'bytes' }) }));
  }
  await dynamodb.send(
    new PutItemCommand({
      TableName: TABLE,
      Item: marshall({ pk: 'live', expiresAt: past + 86_400 * 365 }, { binary: 'bytes' }),
    }),
  );
  for (const pk of ['cancelled-1', 'cancelled-2']) {
    await dynamodb.send(
      new PutItemCommand({ TableName: TABLE, Item: marshall({ pk, status: 'open' }, { binary: 'bytes' }) }),
    );
    await dynamodb.send(
      new DeleteItemCommand({ TableName: TABLE, Key: marshall({ pk }, { binary: 'bytes' }) }),
    );
  }

  // Wait for DynamoDB Local's TTL sweep and the mapping to deliver: a bounded wait for the state,
  // never an assertion on how long it took.
  const from = new Date(Date.now() - 2 * 3600_000);
  const to = new Date(Date.now() + 3600_000);
  let archived: TtlDeleteRecord[] = [];
  let audited = 0;
  const deadline = Date.now() + 90_000;
  while (Date.now() < deadline) {
    archived = [];
    for await (const record of readArchive({
      bucket: BUCKET,
      table: TABLE,
      prefix: 'archive/',
      from,
      to,
      client: s3,
    }))
      archived.push(record as TtlDeleteRecord);
    const listing = await s3.send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix: 'audit/' }));
    audited = listing.KeyCount ?? 0;
    if (archived.length >= expired.length && audited >= 2) break;
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  abort.abort();
  await polling;

  expect(archived.map((r) => r.keys.pk).sort()).toEqual(expired);
  for (const record of archived) {
    expect(record.kind).toBe('ttl-delete');
    expect(record.oldImage?.totalMicros).toBe(12345678901234567890123456789012345678n);
    expect(record.oldImage?.receipt).toEqual(new Uint8Array([0, 1, 2, 253, 254, 255]));
    expect(record.oldImage?.tags).toEqual(new Set(['gift', 'priority']));
  }
  expect(audited).toBe(2);
  expect(invocations.length).toBeGreaterThan(0);
  expect(invocations.every((outcome) => outcome === 'success')).toBe(true);
});
