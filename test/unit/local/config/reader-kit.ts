// The config readers' hostile-input kit: temp folders, small cdk.out folders written by hand (a
// stack with a table, a function on its stream and the function's asset, edited per test), and
// the typed error a read ends in.
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';

export type Template = {
  Resources: Record<string, Record<string, unknown>>;
  Outputs?: Record<string, unknown>;
};

/** A stack whose function (code asset `asset.abc`) reads its table's stream. */
export function streamStack(): Template {
  return {
    Resources: {
      Table: {
        Type: 'AWS::DynamoDB::Table',
        Properties: {
          KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }],
          AttributeDefinitions: [{ AttributeName: 'pk', AttributeType: 'S' }],
          StreamSpecification: { StreamViewType: 'NEW_AND_OLD_IMAGES' },
        },
      },
      Fn: {
        Type: 'AWS::Lambda::Function',
        Properties: { Code: { S3Key: 'abc.zip' }, Handler: 'index.handler' },
      },
      Map: {
        Type: 'AWS::Lambda::EventSourceMapping',
        Properties: {
          EventSourceArn: { 'Fn::GetAtt': ['Table', 'StreamArn'] },
          FunctionName: { Ref: 'Fn' },
          StartingPosition: 'LATEST',
        },
      },
    },
  };
}

/** Temp folders made by the tests of one file, removed by `clean` (call it in afterEach). */
export function tempDirs(prefix: string) {
  const made: string[] = [];
  return {
    make(): string {
      const dir = mkdtempSync(join(tmpdir(), prefix));
      made.push(dir);
      return dir;
    },
    clean(): void {
      for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * A cdk.out in `dir/cdk.out`: each stack's template as `<name>.template.json` (or the raw text
 * given), the manifest naming them (edited by `manifest`), and the code asset `asset.abc`.
 */
export function writeCdkOut(
  dir: string,
  stacks: Record<string, Template | string>,
  manifest?: (artifacts: Record<string, Record<string, unknown>>) => void,
): string {
  const out = join(dir, 'cdk.out');
  mkdirSync(join(out, 'asset.abc'), { recursive: true });
  writeFileSync(join(out, 'asset.abc', 'index.mjs'), 'export const handler = async () => ({});\n');
  const artifacts: Record<string, Record<string, unknown>> = {};
  for (const [name, template] of Object.entries(stacks)) {
    writeFileSync(
      join(out, `${name}.template.json`),
      typeof template === 'string' ? template : JSON.stringify(template),
    );
    artifacts[name] = {
      type: 'aws:cloudformation:stack',
      properties: { templateFile: `${name}.template.json` },
    };
  }
  manifest?.(artifacts);
  writeFileSync(join(out, 'manifest.json'), JSON.stringify({ version: '48.0.0', artifacts }));
  return out;
}

/** The error `run` throws, which must be an instance of `type` (any other error is rethrown). */
export function thrownBy<E extends Error>(type: new (...args: never[]) => E, run: () => unknown): E {
  try {
    run();
  } catch (error) {
    if (error instanceof type) return error;
    throw error;
  }
  throw new Error(`no ${type.name} was thrown`);
}

/** The three ways a path leads out of its folder: `../`, an absolute path, a link inside pointing outside. */
export const WAYS_OUT = ['../', 'absolute', 'symlink'] as const;
export type WayOut = (typeof WAYS_OUT)[number];

/**
 * A path, as a file in folder `inside` would name it, to `target` in the folder `outside`: relative
 * with `..`, absolute, or a new link `link` in `inside` pointing to it.
 */
export function pathOutside(
  way: WayOut,
  inside: string,
  outside: string,
  target: string,
  link: string,
): string {
  if (way === '../') return relative(inside, join(outside, target));
  if (way === 'absolute') return join(outside, target);
  symlinkSync(join(outside, target), join(inside, link));
  return link;
}
