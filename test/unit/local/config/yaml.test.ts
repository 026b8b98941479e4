// biome-ignore-all lint/suspicious/noTemplateCurlyInString: serverless variables, not template literals

import { readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ServerlessConfigError } from '../../../../src/local/config/errors.js';
import { loadServerlessConfig } from '../../../../src/local/config/serverless-config.js';
import { parseServerlessYaml } from '../../../../src/local/config/yaml.js';

const root = path.resolve(import.meta.dirname, '../../../..');

/** A "billion laughs": each level an alias list of ten of the level before; 10^levels leaves. */
function laughs(levels: number): string {
  const lines = ['a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]'];
  for (let i = 1; i <= levels; i++)
    lines.push(`a${i}: &a${i} [${Array.from({ length: 10 }, () => `*a${i - 1}`).join(', ')}]`);
  return `${lines.join('\n')}\n`;
}

describe('parseServerlessYaml', () => {
  it('reads CloudFormation short tags as their long form, in every node kind', () => {
    const text = [
      'ref: !Ref Table',
      'att: !GetAtt Table.StreamArn',
      'attList: !GetAtt [Table, Arn]',
      'sub: !Sub "${AWS::StackName}-x"',
      'subList: !Sub ["${A}-${B}", {A: !Ref X, B: b}]',
      'join: !Join ["-", [a, !Ref B]]',
      'select: !Select [0, !GetAZs ""]',
      'split: !Split [",", "a,b"]',
      'if: !If [IsProd, !Ref A, !Ref "AWS::NoValue"]',
      'cond: !Equals [!Ref Stage, prod]',
      'not: !Not [!Condition IsProd]',
      'and: !And [!Condition A, !Or [!Condition B, !Condition C]]',
      'map: !FindInMap [M, !Ref "AWS::Region", k]',
      'imp: !ImportValue exported',
      'b64: !Base64 text',
      'cidr: !Cidr [10.0.0.0/16, 4, 8]',
      'subMap: !Sub',
      '  - "${x}"',
      '  - x: !GetAtt Q.Arn',
    ].join('\n');
    expect(parseServerlessYaml(text)).toEqual({
      ref: { Ref: 'Table' },
      att: { 'Fn::GetAtt': ['Table', 'StreamArn'] },
      attList: { 'Fn::GetAtt': ['Table', 'Arn'] },
      sub: { 'Fn::Sub': '${AWS::StackName}-x' },
      subList: { 'Fn::Sub': ['${A}-${B}', { A: { Ref: 'X' }, B: 'b' }] },
      join: { 'Fn::Join': ['-', ['a', { Ref: 'B' }]] },
      select: { 'Fn::Select': [0, { 'Fn::GetAZs': '' }] },
      split: { 'Fn::Split': [',', 'a,b'] },
      if: { 'Fn::If': ['IsProd', { Ref: 'A' }, { Ref: 'AWS::NoValue' }] },
      cond: { 'Fn::Equals': [{ Ref: 'Stage' }, 'prod'] },
      not: { 'Fn::Not': [{ Condition: 'IsProd' }] },
      and: { 'Fn::And': [{ Condition: 'A' }, { 'Fn::Or': [{ Condition: 'B' }, { Condition: 'C' }] }] },
      map: { 'Fn::FindInMap': ['M', { Ref: 'AWS::Region' }, 'k'] },
      imp: { 'Fn::ImportValue': 'exported' },
      b64: { 'Fn::Base64': 'text' },
      cidr: { 'Fn::Cidr': ['10.0.0.0/16', 4, 8] },
      subMap: { 'Fn::Sub': ['${x}', { x: { 'Fn::GetAtt': ['Q', 'Arn'] } }] },
    });
  });

  it('keeps merge keys, anchors used a few times, and YAML 1.2 scalars', () => {
    const text = 'base: &b {x: 1, y: on}\nuse:\n  <<: *b\n  z: *b\nflag: true\nnum: 0x10\nnil: ~\n';
    expect(parseServerlessYaml(text)).toEqual({
      base: { x: 1, y: 'on' },
      use: { x: 1, y: 'on', z: { x: 1, y: 'on' } },
      flag: true,
      num: 16,
      nil: null,
    });
  });

  it("reads this project's serverless.yml files and infra/ to the same value as js-yaml did", async () => {
    const { default: jsYaml } = await import('js-yaml');
    const files = [
      'serverless.yml',
      'examples/orders-service/serverless.yml',
      ...readdirSync(path.join(root, 'infra'))
        .filter((f) => f.endsWith('.yml'))
        .map((f) => `infra/${f}`),
      ...['booleans.yml', 'settings.yml', 'unresolved.yml', 'bad-key.yml'].map(
        (f) => `test/unit/local/config/fixtures/${f}`,
      ),
    ];
    for (const file of files) {
      const text = readFileSync(path.join(root, file), 'utf8');
      expect(parseServerlessYaml(text), file).toEqual(jsYaml.load(text));
    }
  });

  it('plain scalars, lists and maps read as js-yaml read them', async () => {
    const { default: jsYaml } = await import('js-yaml');
    const scalar = fc.oneof(
      fc.integer(),
      fc.boolean(),
      fc.constantFrom(null),
      fc.string({ unit: 'grapheme-ascii' }),
    );
    const value = fc.letrec((tie) => ({
      node: fc.oneof({ depthSize: 'small' }, scalar, tie('list'), tie('map')),
      list: fc.array(tie('node'), { maxLength: 4 }),
      map: fc.dictionary(fc.stringMatching(/^[a-z][a-zA-Z0-9]{0,8}$/), tie('node'), { maxKeys: 4 }),
    })).node;
    fc.assert(
      fc.property(value, (v) => {
        const text = jsYaml.dump(v);
        expect(parseServerlessYaml(text)).toEqual(jsYaml.load(text));
      }),
    );
  });

  it('a billion laughs fails at once with an error about aliases, not out of memory', () => {
    expect(() => parseServerlessYaml(laughs(5))).toThrow(/alias/i);
  });

  it('a document over the size limit is refused before parsing', () => {
    expect(() => parseServerlessYaml(`x: "${'a'.repeat(2 * 1024 * 1024)}"\n`)).toThrow(/larger than/);
  });
});

describe('the serverless.yml reader on hostile YAML', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'tidewater-yaml-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('a billion laughs in serverless.yml: ServerlessConfigError naming the file', async () => {
    const file = path.join(dir, 'serverless.yml');
    await writeFile(file, `service: s\nprovider: {name: aws}\n${laughs(5)}`);
    const error = await loadServerlessConfig({ file, env: {} }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ServerlessConfigError);
    expect(error).toMatchObject({ file, message: expect.stringMatching(/alias/i) });
  });

  it('a billion laughs in a file resources: includes: an error naming that file', async () => {
    const file = path.join(dir, 'serverless.yml');
    await writeFile(path.join(dir, 'bomb.yml'), `Resources:\n  X: {Type: AWS::SNS::Topic}\n${laughs(5)}`);
    await writeFile(file, 'service: s\nprovider: {name: aws}\nresources:\n  - ${file(./bomb.yml)}\n');
    const config = await loadServerlessConfig({ file, env: {} });
    const error = await config.get('resources').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ServerlessConfigError);
    expect((error as Error).message).toContain(path.join(dir, 'bomb.yml'));
    expect((error as Error).message).toMatch(/alias/i);
  });
});
