// biome-ignore-all lint/suspicious/noTemplateCurlyInString: CloudFormation Fn::Sub strings, not template literals
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { TemplateReadError } from '../../../../src/local/config/errors.js';
import { loadLocalApp } from '../../../../src/local/config/local-app.js';

const fixtures = join(import.meta.dirname, 'fixtures');
const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A fixture folder copied, one of its files edited. */
function copy(fixture: string, file: string, edit: (text: string) => string): string {
  const dir = mkdtempSync(join(tmpdir(), 'tidewater-local-app-'));
  dirs.push(dir);
  cpSync(join(fixtures, fixture), dir, { recursive: true });
  writeFileSync(join(dir, file), edit(readFileSync(join(dir, file), 'utf8')));
  return dir;
}

const sam = (edit: (text: string) => string) => ({
  template: join(copy('sam', 'template.yaml', edit), 'template.yaml'),
});
type Template = {
  Resources: Record<string, { Properties: Record<string, unknown>; Metadata: Record<string, unknown> }>;
};
const cdk = (edit: (resources: Template['Resources']) => void) => ({
  cdkOut: copy('cdk.out', 'OrdersStack.template.json', (text) => {
    const template = JSON.parse(text) as Template;
    edit(template.Resources);
    return JSON.stringify(template);
  }),
});

async function readError(options: Parameters<typeof loadLocalApp>[0]): Promise<TemplateReadError> {
  try {
    await loadLocalApp(options);
  } catch (error) {
    if (error instanceof TemplateReadError) return error;
    throw error;
  }
  throw new Error('read without an error');
}

describe('loadLocalApp', () => {
  it('plans a SAM template: generated names under <folder>-<stage>, parameters and Sub resolved', async () => {
    const app = await loadLocalApp({
      template: join(
        copy('sam', 'template.yaml', (t) =>
          t
            .replace('Globals:', 'Parameters:\n  Prefix: { Type: String, Default: orders }\nGlobals:')
            .replace(
              'ARCHIVE_BUCKET: !Ref ArchiveBucket',
              'ARCHIVE_BUCKET: !Sub "${Prefix}-${ArchiveBucket}"',
            ),
        ),
        'template.yaml',
      ),
      stage: 'dev',
    });
    const plan = await app.plan();
    const name = app.name;
    expect(plan.tables.map((t) => t.createTable.TableName).sort()).toEqual([
      `${name}-dev-OrdersTable`,
      `${name}-dev-Sessions`,
    ]);
    const [fn] = await app.streamFunctions();
    const refs = await app.plannedReferences();
    expect(refs.refs.Prefix?.ref).toBe('orders');
    expect(fn?.environment.ARCHIVE_BUCKET).toEqual({ 'Fn::Sub': '${Prefix}-${ArchiveBucket}' });
  });

  it('reads one app: config, template and cdkOut together are an InvalidOptionsError', async () => {
    await expect(
      loadLocalApp({ template: join(fixtures, 'sam', 'template.yaml'), cdkOut: join(fixtures, 'cdk.out') }),
    ).rejects.toMatchObject({ name: 'InvalidOptionsError', option: 'cdkOut' });
  });

  it('plans a cdk.out and selects its functions by logical id', async () => {
    const app = await loadLocalApp({ cdkOut: join(fixtures, 'cdk.out') });
    expect(app.name).toBe('OrdersStack');
    expect((await app.streamFunctions(['AuditFunction1C2D'])).map((f) => f.key)).toEqual([
      'AuditFunction1C2D',
    ]);
    const error = await app.streamFunctions(['Nope']).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TemplateReadError);
    expect((error as Error).message).toContain("no stream mapping runs a function 'Nope'");
  });

  it.each([
    [
      'a template with no stream mapping',
      () => sam((t) => t.replace('Type: DynamoDB', 'Type: SQS')),
      'template',
      'Resources',
    ],
    [
      'a function whose handler file is not in its code',
      () => sam((t) => t.replace('Handler: archive.handler', 'Handler: gone.handler')),
      'ArchiveFunction',
      'Handler',
    ],
    [
      'a function whose code is on S3',
      () => sam((t) => t.replace('CodeUri: src/', 'CodeUri: s3://bucket/code.zip')),
      'ArchiveFunction',
      'CodeUri',
    ],
    [
      'a reference to a resource the local servers do not have',
      () => sam((t) => t.replace('!Ref ArchiveBucket', '!GetAtt ArchiveFunction.Arn')),
      'ArchiveFunction',
      'Environment.Variables.ARCHIVE_BUCKET',
    ],
    [
      'an import no stack exports',
      () => sam((t) => t.replace('!Ref ArchiveBucket', '!ImportValue shared-bucket')),
      'ArchiveFunction',
      'Environment.Variables.ARCHIVE_BUCKET',
    ],
    [
      'a stream of a table without a stream',
      () => sam((t) => t.replace('!GetAtt OrdersTable.StreamArn', '!GetAtt Sessions.StreamArn')),
      'ArchiveFunction',
      'Events.Expired.Properties.Stream',
    ],
    [
      'an intrinsic the planner does not evaluate, in a table',
      () =>
        sam((t) =>
          t.replace(
            'BillingMode: PAY_PER_REQUEST',
            'BillingMode: !Select [0, !Split [",", "PAY_PER_REQUEST"]]',
          ),
        ),
      'OrdersTable',
      'BillingMode',
    ],
    [
      'a CDK asset missing from cdk.out',
      () =>
        cdk((r) => {
          r.ArchiveFunction5A6B!.Metadata['aws:asset:path'] = 'asset.0000';
        }),
      'ArchiveFunction5A6B',
      'Code.S3Key',
    ],
    [
      'a CDK function with inline code',
      () =>
        cdk((r) => {
          r.AuditFunction1C2D!.Properties.Code = { ZipFile: 'exports.handler = async () => {}' };
        }),
      'AuditFunction1C2D',
      'Code',
    ],
    [
      'a CDK mapping on an import no stack exports',
      () =>
        cdk((r) => {
          r.AuditFunctionDynamoDBEventSource3E4F!.Properties.EventSourceArn = {
            'Fn::ImportValue': 'OtherStack:TableStreamArn',
          };
        }),
      'AuditFunctionDynamoDBEventSource3E4F',
      'EventSourceArn',
    ],
  ])('%s: a TemplateReadError naming the resource and property', async (_, options, resource, property) => {
    const error = await readError(options());
    expect(error.name).toBe('TemplateReadError');
    expect({ resource: error.resource, property: error.property }).toEqual({ resource, property });
    expect(error.message).toContain(`${resource}.${property}`);
  });

  it('checkFunctions: false reads the resources and stream events of an app whose functions cannot run here', async () => {
    // No local code, and an environment variable the local servers cannot resolve.
    const unrunnable = () =>
      sam((t) =>
        t
          .replace('Handler: archive.handler', 'Handler: gone.handler')
          .replace('!Ref ArchiveBucket', '!GetAtt ArchiveFunction.Arn'),
      );
    expect((await readError(unrunnable())).property).toBe('Handler');
    const app = await loadLocalApp({ ...unrunnable(), checkFunctions: false });
    const [fn] = await app.streamFunctions(['ArchiveFunction']);
    expect(fn?.stream.arn).toEqual({ 'Fn::GetAtt': ['OrdersTable', 'StreamArn'] });
    expect((await app.plan()).tables.map((table) => table.logicalId)).toContain('OrdersTable');
  });
});
