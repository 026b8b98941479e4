// Least privilege by construction: whatever the constructs are given, no IAM statement they
// synthesize has a `*` in an action, a `*` resource, an object grant on a whole bucket, or a key
// grant usable outside the service it is for.
import { Template } from 'aws-cdk-lib/assertions';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as s3 from 'aws-cdk-lib/aws-s3';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { StreamProcessor, TtlArchive, VoteAggregator } from '../../../src/cdk.js';
import { userDeletes } from '../../../src/filters/ready-made.js';
import { actionsOf, iamStatements, inlineCode, newStack, type Statement, streamTable } from './stack.js';

/** What is wrong with one statement, if anything. */
function problems(statement: Statement): string[] {
  const found: string[] = [];
  const text = JSON.stringify(statement);
  for (const action of actionsOf(statement)) if (action.includes('*')) found.push(`action ${action}`);
  const resources = Array.isArray(statement.Resource) ? statement.Resource : [statement.Resource];
  for (const resource of resources) {
    if (resource === '*') found.push('resource *');
    // An object grant is <bucket ARN>/<prefix>*, the prefix never empty.
    const join = (resource as { 'Fn::Join'?: [string, unknown[]] })['Fn::Join'];
    const tail = join?.[1].at(-1);
    if (typeof tail === 'string' && !/^\/[A-Za-z0-9._=-]+\/(?:[A-Za-z0-9._=-]+\/)*\*$/.test(tail))
      found.push(`object resource ${tail}`);
  }
  if (actionsOf(statement).some((a) => a.startsWith('kms:')) && !text.includes('kms:ViaService'))
    found.push('a key grant without kms:ViaService');
  return found;
}

describe('the constructs’ IAM statements', () => {
  it('never hold a wildcard action, a * resource, a whole-bucket object grant or an unconditioned key grant', () => {
    fc.assert(
      fc.property(
        fc.record({
          kms: fc.boolean(),
          routes: fc.constantFrom('ttl-deletes' as const, 'all-deletes' as const),
          compaction: fc.boolean(),
          s3OnFailure: fc.boolean(),
          ownFunction: fc.boolean(),
          archivePrefix: fc.constantFrom('archive/', 'a/b/', 'ttl=expired/'),
        }),
        (c) => {
          const stack = newStack();
          const key = c.kms ? new kms.Key(stack, 'Key') : undefined;
          const table = streamTable(stack, key);
          const code = inlineCode();
          const archive = new TtlArchive(stack, 'Archive', {
            table,
            function: { code },
            encryptionKey: key,
            routes: c.routes,
            archivePrefix: c.archivePrefix,
            compaction: c.compaction ? { function: { code } } : undefined,
          });
          const fn = c.ownFunction
            ? new lambda.Function(stack, 'Own', {
                runtime: lambda.Runtime.NODEJS_22_X,
                handler: 'index.handler',
                code,
              })
            : undefined;
          const audit = new StreamProcessor(stack, 'Audit', {
            table,
            function: fn ?? { code },
            filters: [userDeletes()],
            onFailure: c.s3OnFailure ? new s3.Bucket(stack, 'Failures', { encryptionKey: key }) : undefined,
          });
          archive.grantPutObjects(audit.function, 'audit/');
          new VoteAggregator(stack, 'Votes', { table, function: { code }, poll: 'p1' });
          const statements = iamStatements(Template.fromStack(stack));
          expect(statements.length).toBeGreaterThan(10);
          expect(statements.flatMap(problems)).toEqual([]);
        },
      ),
      { numRuns: 12 },
    );
  });

  it('the check sees a wildcard when there is one (it is not vacuous)', () => {
    const stack = newStack();
    const bucket = new s3.Bucket(stack, 'B');
    const fn = new lambda.Function(stack, 'F', {
      runtime: lambda.Runtime.NODEJS_22_X,
      handler: 'index.handler',
      code: inlineCode(),
    });
    bucket.grantReadWrite(fn); // CDK's own grant: s3:GetObject*, s3:List*, … on bucket/*
    const found = iamStatements(Template.fromStack(stack)).flatMap(problems);
    expect(found).toContain('action s3:GetObject*');
    expect(found).toContain('object resource /*');
  });
});
