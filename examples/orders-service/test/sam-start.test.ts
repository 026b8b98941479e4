// The SAM variant of the service, as a SAM user runs it: `npx tidewater start --once --template
// template.yaml` against local servers. start creates the template's table and bucket, runs the
// DynamoDB event through Lambda's event source mapping rules into src/handlers/archive.ts, and the
// TTL deletes DynamoDB Local's own sweep makes are read back from the archive.
import { useLocalAws } from 'tidewater/local/vitest';
import { expect, it } from 'vitest';
import { archivesUnderStart } from './support/archive-under-start.js';

const local = useLocalAws();

it('archives TTL-expired orders and audits user deletes from the SAM template, under tidewater start', async () => {
  await archivesUnderStart(['--template', 'template.yaml'], local.current, (log) => {
    expect(log).toMatch(
      /batch 100, 1 filter pattern, ReportBatchItemFailures, bisect, retries 3, from TRIM_HORIZON/,
    );
  });
}, 300_000);
