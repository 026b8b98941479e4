// The CDK variant of the service, as a CDK user runs it: the app (cdk/app.ts) synthesized into a
// cloud assembly, then `npx tidewater start --once --cdk-out <dir>` against local servers. start
// creates the stack's table and bucket, runs both stream mappings (TtlArchive's archive function,
// StreamProcessor's audit function) with their filters through Lambda's event source mapping
// rules, with each function's code taken from its asset in the assembly.
import path from 'node:path';
import { useLocalAws } from 'tidewater/local/vitest';
import { beforeAll, expect, it } from 'vitest';
import { synthesizeOrdersApp } from '../cdk/app.js';
import { archivesUnderStart } from './support/archive-under-start.js';

const local = useLocalAws();
// Its own assembly folder: cdk.test.ts synthesizes into cdk.out at the same time.
const assembly = path.join(process.cwd(), '.out', 'cdk-start.out');

beforeAll(async () => {
  await synthesizeOrdersApp(assembly);
}, 120_000);

it('archives TTL-expired orders and audits user deletes from the CDK app, under tidewater start', async () => {
  await archivesUnderStart(['--cdk-out', assembly], local.current, (log) => {
    // Both mappings run, each with the filter its construct wrote.
    expect(log.match(/1 filter pattern, ReportBatchItemFailures, bisect/g)).toHaveLength(2);
  });
}, 300_000);
