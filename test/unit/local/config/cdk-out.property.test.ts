// Issue 36 §4: whatever a cdk.out's stacks hold — intrinsics, imports of each other's exports,
// nested stacks' outputs naming each other — reading it gives an app or a tidewater error, never a
// raw TypeError or RangeError.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { TidewaterError } from '../../../../src/core/index.js';
import { readCdkOut } from '../../../../src/local/config/cdk-out.js';
import { streamStack, tempDirs, writeCdkOut } from './reader-kit.js';
import { namedValues, spliceable, templateValue } from './template-inputs.js';

const temp = tempDirs('tidewater-cdk-property-');
afterEach(() => temp.clean());

const stackInput = fc.record({
  exports: namedValues,
  variable: fc.oneof(templateValue, spliceable),
  nestedOutputs: namedValues,
});

describe('readCdkOut on any stacks', () => {
  it('gives an app or a tidewater error', () => {
    const root = temp.make();
    fc.assert(
      fc.property(fc.array(stackInput, { minLength: 1, maxLength: 3 }), (stacks) => {
        const dir = mkdtempSync(join(root, 'app-'));
        const templates = Object.fromEntries(
          stacks.map(({ exports, variable }, i) => {
            const stack = streamStack();
            (stack.Resources.Fn as { Properties: Record<string, unknown> }).Properties.Environment = {
              Variables: { X: variable },
            };
            stack.Resources.Nested = {
              Type: 'AWS::CloudFormation::Stack',
              Properties: { TemplateURL: 'https://example/x.json' },
              Metadata: { 'aws:asset:path': `nested${i}.json` },
            };
            // Ids and export names are input text: `__proto__` among them, set as own keys.
            const outputs = JSON.parse('{}') as Record<string, unknown>;
            for (const [name, value] of Object.entries(exports))
              Object.defineProperty(outputs, name, {
                value: { Value: value, Export: { Name: name } },
                enumerable: true,
              });
            stack.Outputs = outputs;
            return [`S${i}`, stack];
          }),
        );
        const out = writeCdkOut(dir, templates);
        for (const [i, { nestedOutputs }] of stacks.entries())
          writeFileSync(
            join(out, `nested${i}.json`),
            JSON.stringify({
              Resources: {},
              Outputs: Object.fromEntries(Object.entries(nestedOutputs).map(([n, v]) => [n, { Value: v }])),
            }),
          );
        try {
          expect(readCdkOut(out).functions.length).toBeGreaterThan(0);
        } catch (error) {
          if (!(error instanceof TidewaterError)) throw error;
        }
      }),
      { numRuns: 150 },
    );
  });
});
