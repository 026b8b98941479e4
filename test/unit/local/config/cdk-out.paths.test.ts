// Issue 36 §5: every path a cdk.out names resolves inside the cdk.out, or the read refuses with a
// TemplateReadError naming the property (and reads nothing outside).
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { readCdkOut } from '../../../../src/local/config/cdk-out.js';
import { TemplateReadError } from '../../../../src/local/config/errors.js';
import {
  pathOutside,
  streamStack,
  type Template,
  tempDirs,
  thrownBy,
  WAYS_OUT,
  writeCdkOut,
} from './reader-kit.js';

const temp = tempDirs('tidewater-cdk-paths-');
afterEach(() => temp.clean());

/** The read's error, which must be the refusal of a path (not a missing file found later). */
function readError(dir: string, stage?: string): TemplateReadError {
  const error = thrownBy(TemplateReadError, () => readCdkOut(dir, stage));
  expect(error.message).toMatch(/leads outside/);
  return error;
}

/** A folder beside the cdk.out (outside it) with a readable template and a handler. */
function outsideFolder(dir: string): string {
  const outside = join(dir, 'outside');
  mkdirSync(outside);
  writeFileSync(join(outside, 'Stack.template.json'), JSON.stringify(streamStack()));
  writeFileSync(join(outside, 'index.mjs'), 'export const handler = async () => ({});\n');
  return outside;
}

describe('readCdkOut: paths stay inside the cdk.out', () => {
  it.each(WAYS_OUT)('properties.templateFile (%s)', (way) => {
    const dir = temp.make();
    const outside = outsideFolder(dir);
    const out = writeCdkOut(dir, { Stack: streamStack() }, (artifacts) => {
      (artifacts.Stack as { properties: Record<string, unknown> }).properties.templateFile = '';
    });
    const templateFile = pathOutside(way, out, outside, 'Stack.template.json', 'linked.template.json');
    writeCdkOut(dir, { Stack: streamStack() }, (artifacts) => {
      (artifacts.Stack as { properties: Record<string, unknown> }).properties.templateFile = templateFile;
    });
    const error = readError(out);
    expect(error.property).toBe('properties.templateFile');
    expect(error.file).toBe(join(out, 'manifest.json'));
  });

  it('properties.templateFile of ../../etc/passwd is refused, not read', () => {
    const dir = temp.make();
    const out = writeCdkOut(dir, { Stack: streamStack() }, (artifacts) => {
      (artifacts.Stack as { properties: Record<string, unknown> }).properties.templateFile =
        '../../etc/passwd';
    });
    expect(readError(out).message).toMatch(
      /properties\.templateFile: "\.\.\/\.\.\/etc\/passwd" leads outside/,
    );
  });

  it.each(WAYS_OUT)("a function's Metadata aws:asset:path (%s)", (way) => {
    const dir = temp.make();
    const outside = outsideFolder(dir);
    const out = writeCdkOut(dir, {});
    const stack = streamStack();
    (stack.Resources.Fn as { Metadata?: unknown }).Metadata = {
      'aws:asset:path': pathOutside(way, out, outside, '', 'asset.linked'),
    };
    writeCdkOut(dir, { Stack: stack });
    const error = readError(out);
    expect([error.resource, error.property]).toEqual(['Fn', "Metadata['aws:asset:path']"]);
  });

  // A key names the folder `asset.<hash>`, never an absolute path: `..` after it, or a link, lead out.
  it.each(['../', 'symlink'] as const)("a function's Code.S3Key (%s)", (way) => {
    const dir = temp.make();
    const outside = outsideFolder(dir);
    const out = writeCdkOut(dir, {});
    const key = way === '../' ? '/../../outside.zip' : 'linked.zip';
    if (way === 'symlink') symlinkSync(outside, join(out, 'asset.linked'));
    const stack = streamStack();
    (stack.Resources.Fn as { Properties: { Code: { S3Key: string } } }).Properties.Code.S3Key = key;
    writeCdkOut(dir, { Stack: stack });
    const error = readError(out);
    expect([error.resource, error.property]).toEqual(['Fn', 'Code.S3Key']);
  });

  it.each(WAYS_OUT)("a stage's directoryName (%s)", (way) => {
    const dir = temp.make();
    const outside = join(dir, 'outside');
    // A whole readable assembly outside the cdk.out: only the path stops it.
    writeCdkOut(outside, { Stack: streamStack() });
    const out = writeCdkOut(dir, {});
    const directoryName = pathOutside(way, out, outside, 'cdk.out', 'assembly-Prod');
    writeCdkOut(dir, {}, (artifacts) => {
      artifacts['assembly-Prod'] = {
        type: 'cdk:cloud-assembly',
        properties: { directoryName, displayName: 'Prod' },
      };
    });
    const error = readError(out, 'Prod');
    expect(error.property).toBe('artifacts.assembly-Prod.properties.directoryName');
  });

  it.each(WAYS_OUT)("a nested stack's template (Metadata aws:asset:path, %s)", (way) => {
    const dir = temp.make();
    const outside = outsideFolder(dir);
    const out = writeCdkOut(dir, {});
    const parent: Template = streamStack();
    parent.Resources.Nested = {
      Type: 'AWS::CloudFormation::Stack',
      Properties: { TemplateURL: 'https://example/x.json' },
      Metadata: { 'aws:asset:path': pathOutside(way, out, outside, 'Stack.template.json', 'nested.json') },
    };
    writeCdkOut(dir, { Stack: parent });
    const error = readError(out);
    expect([error.resource, error.property]).toEqual(['Nested', "Metadata['aws:asset:path']"]);
  });

  it("a nested stack's template through the asset manifest (properties.file, source.path)", () => {
    const dir = temp.make();
    outsideFolder(dir);
    const hash = 'a'.repeat(64);
    const parent: Template = streamStack();
    parent.Resources.Nested = {
      Type: 'AWS::CloudFormation::Stack',
      Properties: { TemplateURL: `https://bucket/${hash}.json` },
    };
    const out = writeCdkOut(dir, { Stack: parent }, (artifacts) => {
      artifacts['Stack.assets'] = { type: 'cdk:asset-manifest', properties: { file: 'Stack.assets.json' } };
    });
    writeFileSync(
      join(out, 'Stack.assets.json'),
      JSON.stringify({ files: { [hash]: { source: { path: '../outside/Stack.template.json' } } } }),
    );
    expect(readError(out).property).toBe('source.path');
    writeCdkOut(dir, { Stack: parent }, (artifacts) => {
      artifacts['Stack.assets'] = { type: 'cdk:asset-manifest', properties: { file: '../outside/x.json' } };
    });
    expect(readError(out).property).toBe('properties.file');
  });

  it("a function's Handler file linked to one outside its asset folder", () => {
    const dir = temp.make();
    const outside = outsideFolder(dir);
    const out = writeCdkOut(dir, {});
    symlinkSync(join(outside, 'index.mjs'), join(out, 'asset.abc', 'linked.mjs'));
    const stack = streamStack();
    (stack.Resources.Fn as { Properties: { Handler: string } }).Properties.Handler = 'linked.handler';
    writeCdkOut(dir, { Stack: stack });
    const error = readError(out);
    expect([error.resource, error.property]).toEqual(['Fn', 'Handler']);
  });

  it('reads the same app when every path stays inside', () => {
    const dir = temp.make();
    const out = writeCdkOut(dir, { Stack: streamStack() });
    expect(readCdkOut(out).functions.map((fn) => fn.handlerModule)).toEqual([
      join(out, 'asset.abc', 'index'),
    ]);
  });
});
