import { describe, expect, it } from 'vitest';
import { loadServerlessConfig } from '../../../src/local/config/serverless-config.js';

const KEY = 'arn:aws:kms:us-east-1:123456789012:key/00000000-0000-0000-0000-000000000000';
type Statement = { Sid?: string; Condition?: { StringEquals?: Record<string, unknown> } };
type Role = { Properties: { Policies: { PolicyDocument: { Statement: unknown[] } }[] } };

/** The KMS statement of a role, as the stack gets it with a kmsKeyArn (the Fn::If's true branch). */
async function keyStatement(role: string): Promise<Statement | undefined> {
  const config = await loadServerlessConfig({ file: 'serverless.yml', env: { TIDEWATER_KMS_KEY_ARN: KEY } });
  const resources = (await config.get('resources')) as { Resources?: Record<string, Role> }[];
  const found = resources.map((r) => r.Resources?.[role]).find(Boolean);
  const statements = found?.Properties.Policies.flatMap((p) => p.PolicyDocument.Statement) ?? [];
  const branches = statements.map((s) => (s as { 'Fn::If'?: unknown[] })['Fn::If']?.[1] ?? s) as Statement[];
  return branches.find((s) => s.Sid?.endsWith('Key'));
}

const via = (service: string) => ({
  'Fn::Join': ['', [`${service}.`, { Ref: 'AWS::Region' }, '.amazonaws.com']],
});

describe('KMS grants', () => {
  it('each role may use the key only through the services that need it (kms:ViaService)', async () => {
    expect((await keyStatement('ArchiveTtlRole'))?.Condition?.StringEquals?.['kms:ViaService']).toEqual([
      via('s3'),
      via('sqs'),
      via('dynamodb'),
    ]);
    expect((await keyStatement('CompactArchiveRole'))?.Condition?.StringEquals?.['kms:ViaService']).toEqual([
      via('s3'),
    ]);
    expect((await keyStatement('AggregateVotesRole'))?.Condition?.StringEquals?.['kms:ViaService']).toEqual(
      via('dynamodb'),
    );
    // The backfill function reads the export and writes the archive (S3), sends dead letters (SQS);
    // its state machine reads manifests and writes results (S3).
    expect(
      (await keyStatement('BackfillExportFileRole'))?.Condition?.StringEquals?.['kms:ViaService'],
    ).toEqual([via('s3'), via('sqs')]);
    expect(
      (await keyStatement('BackfillStateMachineRole'))?.Condition?.StringEquals?.['kms:ViaService'],
    ).toEqual([via('s3')]);
  });
});
