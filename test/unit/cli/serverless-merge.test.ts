// biome-ignore-all lint/suspicious/noTemplateCurlyInString: serverless variables, not template literals
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { mergeServerlessYaml, templatePieces } from '../../../src/cli/serverless-merge.js';
import { parseServerlessYaml } from '../../../src/local/config/yaml.js';

const template = readFileSync(
  new URL('../../../templates/init/serverless.yml', import.meta.url),
  'utf8',
).replace('{{service}}', 'svc');
const pieces = templatePieces(template, ['RecordsTable', 'ArchiveBucket', 'ArchiveFunctionRole']);

describe('merging into serverless.yml as text', () => {
  it("cuts the template's pieces with their comments", () => {
    expect(pieces.plugins).toEqual(['serverless-esbuild']);
    expect(Object.keys(pieces.custom)).toEqual(['esbuild']);
    expect(pieces.custom.esbuild?.lines[0]).toMatch(/^# serverless-esbuild: one ESM bundle per function/);
    expect(pieces.functions.archive?.lines).toContain('archive:');
    expect(pieces.resources.map((r) => r.value)).toEqual([
      '${file(./infra/records-table.yml)}',
      '${file(./infra/archive-bucket.yml)}',
      '${file(./infra/archive-role.yml)}',
    ]);
  });

  it("handles a list written at its key's indentation, Windows line ends, and a resources list", () => {
    const text = [
      'service: s',
      'plugins:',
      '- serverless-offline',
      'resources:',
      '- Resources:',
      '    Other: { Type: AWS::SNS::Topic }',
      '',
    ].join('\r\n');
    const result = mergeServerlessYaml(text, pieces);
    expect(result.kind).toBe('merged');
    if (result.kind !== 'merged') return;
    expect(result.text).toContain('- serverless-offline\r\n- serverless-esbuild\r\n');
    expect(result.text.replace(/\r\n/g, '')).not.toContain('\n');
    const parsed = parseServerlessYaml(result.text) as { resources: unknown[]; plugins: string[] };
    expect(parsed.plugins).toEqual(['serverless-offline', 'serverless-esbuild']);
    expect(parsed.resources).toHaveLength(4);
    expect(mergeServerlessYaml(result.text, pieces)).toEqual({ kind: 'unchanged' });
  });

  it('reports what it cannot merge, and why, instead of guessing', () => {
    const cases: [string, RegExp][] = [
      ['service: s\ncustom: ${file(./custom.yml)}\n', /custom: is not a block mapping/],
      ['service: s\nplugins: [a]\n', /plugins: is not a block list/],
      [
        'service: s\nresources:\n  Resources:\n    RecordsTable: { Type: AWS::DynamoDB::Table }\n',
        /resources: already declares RecordsTable/,
      ],
      ['service: s\n---\nother: 1\n', /does not parse|several YAML documents/],
      ['- a\n- b\n', /not a YAML mapping/],
    ];
    for (const [text, reason] of cases) {
      const result = mergeServerlessYaml(text, pieces);
      expect(result.kind, text).toBe('unmergeable');
      if (result.kind === 'unmergeable') expect(result.reason, text).toMatch(reason);
    }
  });
});
