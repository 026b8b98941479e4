import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { readCdkOut } from '../../../../src/local/config/cdk-out.js';
import { TemplateReadError } from '../../../../src/local/config/errors.js';
import { toEmulatorOptions } from '../../../../src/local/config/stream-function.js';

const fixture = join(import.meta.dirname, 'fixtures', 'cdk.out');
const TEMPLATE = 'OrdersStack.template.json';
const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

type Template = { Resources: Record<string, { Properties: Record<string, unknown>; Metadata?: unknown }> };

/** The fixture copied, its stack template edited. */
function edited(edit: (template: Template, dir: string) => void): string {
  const dir = mkdtempSync(join(tmpdir(), 'tidewater-cdk-out-'));
  dirs.push(dir);
  cpSync(fixture, dir, { recursive: true });
  const file = join(dir, TEMPLATE);
  const template = JSON.parse(readFileSync(file, 'utf8')) as Template;
  edit(template, dir);
  writeFileSync(file, JSON.stringify(template));
  return dir;
}

function readError(dir: string): TemplateReadError {
  try {
    readCdkOut(dir);
  } catch (error) {
    if (error instanceof TemplateReadError) return error;
    throw error;
  }
  throw new Error(`${dir} was read without an error`);
}

describe('readCdkOut', () => {
  it('reads every event source mapping with its function, code from the asset folder', () => {
    const app = readCdkOut(fixture);
    const byKey = Object.fromEntries(app.functions.map((fn) => [fn.key, fn]));
    expect(Object.keys(byKey).sort()).toEqual(['ArchiveFunction5A6B', 'AuditFunction1C2D']);
    expect(byKey.ArchiveFunction5A6B).toMatchObject({
      handlerModule: join(fixture, 'asset.4f1c2a', 'index'),
      handlerExport: 'handler',
      timeoutSeconds: 30,
      memorySize: 128,
      environment: { ARCHIVE_BUCKET: { Ref: 'ArchiveBucket7A2B' } },
      stream: { onFailure: { arn: { 'Fn::GetAtt': ['OnFailureQueue9C3D', 'Arn'] } } },
    });
    expect(toEmulatorOptions(byKey.ArchiveFunction5A6B!)).toMatchObject({
      batchSize: 50,
      reportBatchItemFailures: true,
      bisectBatchOnFunctionError: true,
      maximumRetryAttempts: 2,
      maximumRecordAgeInSeconds: 3600,
      filterPatterns: [{ eventName: ['REMOVE'] }],
    });
    // Code.S3Key alone (no asset metadata) finds asset.<hash>.
    expect(byKey.AuditFunction1C2D?.handlerModule).toBe(join(fixture, 'asset.9b0d7e', 'index'));
    expect(byKey.AuditFunction1C2D?.stream).toMatchObject({
      startingPosition: 'LATEST',
      tumblingWindowInSeconds: 60,
    });
    expect(Object.keys(app.resources)).toEqual(
      expect.arrayContaining(['OrdersTable0D1E', 'ArchiveBucket7A2B', 'OnFailureQueue9C3D']),
    );
    expect(app.resources).not.toHaveProperty('ArchiveFunction5A6B');
  });

  it.each([
    [
      'an asset missing from cdk.out',
      (_: Template, dir: string) => rmSync(join(dir, 'asset.9b0d7e'), { recursive: true }),
      'AuditFunction1C2D',
      'Code.S3Key',
    ],
    [
      'inline code',
      (t: Template) => {
        t.Resources.AuditFunction1C2D!.Properties.Code = { ZipFile: 'exports.handler = () => {}' };
      },
      'AuditFunction1C2D',
      'Code',
    ],
    [
      'a mapping to a function outside the template',
      (t: Template) => {
        t.Resources.AuditFunctionDynamoDBEventSource3E4F!.Properties.FunctionName =
          'arn:aws:lambda:::function:x';
      },
      'AuditFunctionDynamoDBEventSource3E4F',
      'FunctionName',
    ],
    [
      'an intrinsic not resolved locally',
      (t: Template) => {
        t.Resources.ArchiveFunction5A6B!.Properties.Environment = {
          Variables: { ARCHIVE_BUCKET: { 'Fn::ImportValue': 'shared' } },
        };
      },
      'ArchiveFunction5A6B',
      'Environment.Variables.ARCHIVE_BUCKET',
    ],
    [
      'no stream mapping',
      (t: Template) => {
        delete t.Resources.ArchiveFunctionDynamoDBEventSource0A1B;
        delete t.Resources.AuditFunctionDynamoDBEventSource3E4F;
      },
      'templates',
      'Resources',
    ],
  ])('names the resource and property for %s', (_, edit, resource, property) => {
    const error = readError(edited(edit));
    expect(error.name).toBe('TemplateReadError');
    expect({ resource: error.resource, property: error.property }).toEqual({ resource, property });
  });
});
