// Issue 36 §4: a small hostile cdk.out ends in a TemplateReadError naming what is wrong, in bounded
// work: imports doubling through stacks, import cycles, a stack nesting itself, nested outputs
// naming each other, nested stacks multiplying, and JSON nested 200,000 deep.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { MAX_SPLICED_NODES, MAX_STACK_TEMPLATES, readCdkOut } from '../../../../src/local/config/cdk-out.js';
import { TemplateReadError } from '../../../../src/local/config/errors.js';
import { streamStack, type Template, tempDirs, thrownBy, writeCdkOut } from './reader-kit.js';

const temp = tempDirs('tidewater-cdk-bounds-');
afterEach(() => temp.clean());

const readError = (out: string) => thrownBy(TemplateReadError, () => readCdkOut(out));

/** The stream stack with its function's environment variable X set to `value`. */
function withVariable(value: unknown): Template {
  const stack = streamStack();
  (stack.Resources.Fn as { Properties: Record<string, unknown> }).Properties.Environment = {
    Variables: { X: value },
  };
  return stack;
}

function exporting(exports: Record<string, unknown>): Template {
  return {
    Resources: { Meta: { Type: 'AWS::CDK::Metadata' } },
    Outputs: Object.fromEntries(
      Object.entries(exports).map(([name, value]) => [name, { Value: value, Export: { Name: name } }]),
    ),
  };
}

describe('readCdkOut: bounded on hostile input', () => {
  it('stacks whose exports each import the one before twice: refused past MAX_SPLICED_NODES', () => {
    const stacks: Record<string, Template> = {};
    for (let i = 1; i <= 30; i++) {
      const before = { 'Fn::ImportValue': `E${i - 1}` };
      stacks[`S${i}`] = exporting({ [`E${i}`]: { 'Fn::Join': ['', [before, before]] } });
    }
    stacks.S0 = exporting({ E0: 'x' });
    stacks.App = withVariable({ 'Fn::ImportValue': 'E30' });
    const error = readError(writeCdkOut(temp.make(), stacks));
    expect(error.message).toContain(`expand past ${MAX_SPLICED_NODES} nodes`);
    expect(error.resource).toBe('Fn');
  });

  it('an import cycle across stacks: the chain named', () => {
    const out = writeCdkOut(temp.make(), {
      A: exporting({ EA: { 'Fn::ImportValue': 'EB' } }),
      B: exporting({ EB: { 'Fn::Join': ['', [{ 'Fn::ImportValue': 'EA' }]] } }),
      App: withVariable({ 'Fn::ImportValue': 'EA' }),
    });
    expect(readError(out).message).toMatch(
      /form a cycle: Fn::ImportValue EA → Fn::ImportValue EB → Fn::ImportValue EA/,
    );
  });

  it('a stack that nests itself', () => {
    const dir = temp.make();
    const stack = streamStack();
    stack.Resources.Self = {
      Type: 'AWS::CloudFormation::Stack',
      Properties: { TemplateURL: 'https://example/x.json' },
      Metadata: { 'aws:asset:path': 'Stack.template.json' },
    };
    const error = readError(writeCdkOut(dir, { Stack: stack }));
    expect([error.resource, error.property]).toEqual(['Self', 'TemplateURL']);
    expect(error.message).toMatch(/nests a stack inside itself: Stack.template.json → Stack.template.json/);
  });

  it("nested stacks' outputs that refer to each other", () => {
    const dir = temp.make();
    const parent = withVariable({ 'Fn::GetAtt': ['Nested', 'Outputs.A'] });
    parent.Resources.Nested = {
      Type: 'AWS::CloudFormation::Stack',
      Properties: { TemplateURL: 'https://example/x.json' },
      Metadata: { 'aws:asset:path': 'nested.json' },
    };
    const out = writeCdkOut(dir, { Stack: parent });
    writeFileSync(
      join(out, 'nested.json'),
      JSON.stringify({
        Resources: {},
        Outputs: {
          A: { Value: { 'Fn::GetAtt': ['Nested', 'Outputs.B'] } },
          B: { Value: { 'Fn::Join': ['', [{ 'Fn::GetAtt': ['Nested', 'Outputs.A'] }]] } },
        },
      }),
    );
    expect(readError(out).message).toMatch(
      /form a cycle: Nested.Outputs.A → Nested.Outputs.B → Nested.Outputs.A/,
    );
  });

  it('nested stacks multiplying tenfold per level: refused past MAX_STACK_TEMPLATES', () => {
    const dir = temp.make();
    const tenOf = (file: string) =>
      Object.fromEntries(
        Array.from({ length: 10 }, (_, i) => [
          `N${i}`,
          {
            Type: 'AWS::CloudFormation::Stack',
            Properties: { TemplateURL: 'https://example/x.json' },
            Metadata: { 'aws:asset:path': file },
          },
        ]),
      );
    const parent = streamStack();
    Object.assign(parent.Resources, tenOf('l1.json'));
    const out = writeCdkOut(dir, { Stack: parent });
    writeFileSync(join(out, 'l1.json'), JSON.stringify({ Resources: tenOf('l2.json') }));
    writeFileSync(join(out, 'l2.json'), JSON.stringify({ Resources: tenOf('l3.json') }));
    writeFileSync(join(out, 'l3.json'), JSON.stringify({ Resources: {} }));
    expect(readError(out).message).toContain(`more than ${MAX_STACK_TEMPLATES} nested stack templates`);
  });

  it.each([
    ['a template', 'Stack.template.json'],
    ['the manifest', 'manifest.json'],
  ])('%s of JSON nested 200,000 deep: the file named', (_what, name) => {
    const out = writeCdkOut(temp.make(), { Stack: streamStack() });
    const depth = 200_000;
    writeFileSync(join(out, name), `{"Resources":${'['.repeat(depth)}${']'.repeat(depth)}}`);
    const error = readError(out);
    expect(error.file).toBe(join(out, name));
    expect(error.message).toMatch(/nests deeper than 100 levels/);
  });
});
