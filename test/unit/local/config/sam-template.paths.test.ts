// Issue 36 §5: a SAM template's CodeUri (and its Handler inside it) stays inside the template's
// project, or the read refuses with a TemplateReadError naming the property.
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { TemplateReadError } from '../../../../src/local/config/errors.js';
import { readSamTemplate } from '../../../../src/local/config/sam-template.js';
import { pathOutside, tempDirs, thrownBy, WAYS_OUT } from './reader-kit.js';

const temp = tempDirs('tidewater-sam-paths-');
afterEach(() => temp.clean());

/** A project (package.json) with template.yaml, its code in src/, and a handler outside the project. */
function project(codeUri: string, handler = 'index.handler'): { dir: string; file: string; outside: string } {
  const root = temp.make();
  const dir = join(root, 'app');
  const outside = join(root, 'outside');
  mkdirSync(join(dir, 'src'), { recursive: true });
  mkdirSync(outside);
  writeFileSync(join(dir, 'package.json'), '{}');
  for (const folder of [join(dir, 'src'), outside])
    writeFileSync(join(folder, 'index.mjs'), 'export const handler = async () => ({});\n');
  const file = join(dir, 'template.yaml');
  writeFileSync(
    file,
    [
      'Resources:',
      '  Table:',
      '    Type: AWS::DynamoDB::Table',
      '    Properties:',
      '      AttributeDefinitions: [{ AttributeName: pk, AttributeType: S }]',
      '      KeySchema: [{ AttributeName: pk, KeyType: HASH }]',
      '      StreamSpecification: { StreamViewType: NEW_IMAGE }',
      '  Fn:',
      '    Type: AWS::Serverless::Function',
      '    Properties:',
      `      CodeUri: ${JSON.stringify(codeUri)}`,
      `      Handler: ${handler}`,
      '      Events:',
      '        S: { Type: DynamoDB, Properties: { Stream: !GetAtt Table.StreamArn, StartingPosition: LATEST } }',
      '',
    ].join('\n'),
  );
  return { dir, file, outside };
}

function readError(file: string): TemplateReadError {
  return thrownBy(TemplateReadError, () => readSamTemplate(file));
}

describe('readSamTemplate: CodeUri stays inside the project', () => {
  it('reads code inside the project', () => {
    const { dir, file } = project('src/');
    expect(readSamTemplate(file).functions[0]?.handlerModule).toBe(join(dir, 'src', 'index'));
  });

  it.each(WAYS_OUT)('refuses a CodeUri outside it (%s)', (way) => {
    const { dir, file, outside } = project('placeholder');
    const codeUri = pathOutside(way, dir, outside, '', 'linked');
    writeFileSync(file, readFileSync(file, 'utf8').replace('"placeholder"', JSON.stringify(codeUri)));
    const error = readError(file);
    expect(error.message).toMatch(/leads outside/);
    expect([error.resource, error.property]).toEqual(['Fn', 'CodeUri']);
  });

  it('refuses a Handler file linked to one outside the CodeUri folder', () => {
    const { dir, file, outside } = project('src/', 'linked.handler');
    symlinkSync(join(outside, 'index.mjs'), join(dir, 'src', 'linked.mjs'));
    const error = readError(file);
    expect(error.message).toMatch(/symbolic link/);
    expect([error.resource, error.property]).toEqual(['Fn', 'Handler']);
  });
});
