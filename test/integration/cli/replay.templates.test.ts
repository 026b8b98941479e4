import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CreateBucketCommand, GetObjectCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
import { expect, it } from 'vitest';
import { EXIT } from '../../../src/cli/exit-codes.js';
import { streamEvents } from '../../../src/local/emulator/events.js';
import { uniqueName } from '../../support/aws.js';
import { cliTestClients, localEnvFile, runCli } from '../../support/cli-test.js';

// `tidewater replay --template` / `--cdk-out`: a function of a SAM template or a cdk.out replayed
// from a file, with its environment resolved to the names `tidewater start` gives the resources.
const fixtures = join(import.meta.dirname, '..', '..', 'fixtures', 'apps');
const clients = cliTestClients();

it.each([
  ['--template', join(fixtures, 'sam', 'template.yaml'), 'AuditFunction', (stage: string) => `sam-${stage}`],
  [
    '--cdk-out',
    join(fixtures, 'cdk.out'),
    'AuditFunction5F2E8A0B',
    (stage: string) => `StorageStack-ServiceStack-${stage}`,
  ],
])(
  'replay %s runs a function of the app through its mapping, its environment resolved',
  async (flag, app, key, stack) => {
    const stage = uniqueName('r').toLowerCase();
    // The bucket `tidewater start` would have created (<stack>-<LogicalId>): the audit sink writes there.
    const bucketId = flag === '--cdk-out' ? 'ArchiveBucket6F5D3E0E' : 'ArchiveBucket';
    const target = `${stack(stage)}-${bucketId}`.toLowerCase();
    await clients.s3.send(new CreateBucketCommand({ Bucket: target }));
    const dir = await mkdtemp(join(tmpdir(), 'tidewater-replay-template-'));
    const events = streamEvents({ tableName: 'orders', keyAttributes: ['pk'] });
    const file = join(dir, 'events.jsonl');
    await writeFile(
      file,
      `${JSON.stringify(
        events.event(
          events.insert({ pk: 'new' }),
          events.userDelete({ pk: 'cancelled', note: 'by hand' }),
          events.ttlDelete({ pk: 'expired', expiresAt: 1_700_000_000 }),
        ),
      )}\n`,
    );
    const { code, out } = await runCli([
      'replay',
      file,
      flag,
      app,
      '-f',
      key,
      '--stage',
      stage,
      '--local-env',
      await localEnvFile(dir),
      '--no-progress',
    ]);
    expect(code, out).toBe(EXIT.ok);
    // The mapping's filter (REMOVE only) dropped the insert; the sink got the user delete only.
    expect(out).toMatch(/3 records, 1 invocations, 1 filtered out, 0 discarded/);
    const listed = await clients.s3.send(new ListObjectsV2Command({ Bucket: target, Prefix: 'audit/' }));
    expect(listed.Contents?.map((o) => o.Key)).toEqual([`audit/${stack(stage)}/cancelled.json`]);
    const body = await clients.s3.send(
      new GetObjectCommand({ Bucket: target, Key: `audit/${stack(stage)}/cancelled.json` }),
    );
    expect(JSON.parse(await (body.Body?.transformToString() ?? Promise.resolve('')))).toEqual({
      keys: { pk: { S: 'cancelled' } },
      oldImage: { pk: { S: 'cancelled' }, note: { S: 'by hand' } },
    });
  },
);
