// Issue 38, item 15: what the first week needs and was documented nowhere has a recipe, each
// naming the thing a reader searches for. A recipe that loses its subject fails here.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const read = (file: string) => readFileSync(new URL(`../../../${file}`, import.meta.url), 'utf8');

/** The section of docs/recipes.md under a `## ` heading containing `title`. */
function section(title: string): string {
  const text = read('docs/recipes.md');
  const start = text.split('\n## ').find((part) => part.split('\n', 1)[0]!.includes(title));
  if (start === undefined) throw new Error(`docs/recipes.md has no section "${title}"`);
  return start;
}

describe('docs/recipes.md', () => {
  it.each([
    ['TTL delete through `tidewater start --once`', ['--dynamodb-endpoint', 'sweep', 'again', 'same']],
    ['bucket names are lowercase', ['lowercased', 'BucketName', '<service>-<stage>-<LogicalId>']],
    ['`backfill --handler`', ['stream function', 'environment', 'runBackfill']],
    [
      '`SqsFailureDestination`',
      ['SqsFailureDestination(sqsClient, queueUrl)', 'messages(queueName)', 'startSqsServer'],
    ],
    ['`writeLocalExport`', ['writeLocalExport({', 'prefix', '--from-export']],
    [
      'A bad line in an export',
      ['lines before it are delivered and checkpointed', 'InvalidExportLineError', '--checkpoint'],
    ],
    ['decode the binaries', ['base64', 'marshall(record.newImage)', "Buffer.from(value, 'base64')"]],
    ['Package before you deploy', ['npx osls package', '--package .serverless']],
  ])('%s', (title, facts) => {
    const text = section(title);
    for (const fact of facts) expect(text, fact).toContain(fact);
  });

  it('is on the path: the guide index and the getting-started page link it', () => {
    expect(read('docs/README.md')).toContain('(recipes.md)');
    expect(read('README.md')).toContain('(docs/getting-started.md)');
    expect(read('README.md')).toContain('(docs/README.md)');
  });
});
