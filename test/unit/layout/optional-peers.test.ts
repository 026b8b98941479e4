// aws-cdk-lib and constructs are optional peer dependencies: only `tidewater/cdk` may load them. A
// Lambda bundle or a script importing any other entry must work in a project without them, so
// each entry is imported in a fresh node process where they cannot be resolved.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const CDK_PACKAGES = ['aws-cdk-lib', 'constructs'];

// A resolve hook that answers the CDK packages as a project without them would.
const hooks = `export async function resolve(specifier, context, next) {
  if (${JSON.stringify(CDK_PACKAGES)}.some((p) => specifier === p || specifier.startsWith(p + '/'))) {
    const error = new Error('Cannot find package ' + specifier);
    error.code = 'ERR_MODULE_NOT_FOUND';
    throw error;
  }
  return next(specifier, context);
}`;
const register = `import { register } from 'node:module'; register(${JSON.stringify(`data:text/javascript,${encodeURIComponent(hooks)}`)});`;

function importWithoutCdk(file: string) {
  const script = `await import(${JSON.stringify(path.join(root, file))}); process.stdout.write('loaded');`;
  return spawnSync(
    process.execPath,
    ['--import', `data:text/javascript,${encodeURIComponent(register)}`, '--input-type=module', '-e', script],
    { cwd: root, encoding: 'utf8', timeout: 120_000 },
  );
}

const exportsMap = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')).exports as Record<
  string,
  string | { import?: string }
>;
const entries = Object.entries(exportsMap).flatMap(([entry, target]) =>
  typeof target === 'object' && target.import !== undefined ? [[entry, target.import] as const] : [],
);

describe('the optional CDK peers', () => {
  it.each(entries.filter(([entry]) => entry !== './cdk'))(
    '%s loads without aws-cdk-lib and constructs',
    (_, file) => {
      const result = importWithoutCdk(file);
      expect(result.stderr).toBe('');
      expect(result.stdout).toBe('loaded');
    },
  );

  it('tidewater/cdk is the entry that needs them (the hook does hide them)', () => {
    expect(entries.map(([entry]) => entry)).toContain('./cdk');
    const result = importWithoutCdk('dist/cdk.js');
    expect(result.status).not.toBe(0);
    expect(result.stderr).toMatch(/Cannot find package (aws-cdk-lib|constructs)/);
  });
});
