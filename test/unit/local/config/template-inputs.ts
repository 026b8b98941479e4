// Random template and config values for the readers' property tests: nested JSON with
// CloudFormation intrinsics, Refs, imports, nested-stack outputs and serverless variables, over a
// few names (so references meet), the names objects hide behind (`__proto__`, `toString`) among them.
import fc from 'fast-check';

export const NAMES = [
  'A',
  'B',
  'C',
  'Table',
  '__proto__',
  'toString',
  'AWS::Region',
  'AWS::NoValue',
] as const;

const INTRINSICS = [
  'Ref',
  'Condition',
  'Fn::GetAtt',
  'Fn::Join',
  'Fn::Sub',
  'Fn::If',
  'Fn::Equals',
  'Fn::Not',
  'Fn::And',
  'Fn::Or',
  'Fn::Select',
  'Fn::ImportValue',
] as const;

const name = fc.constantFrom(...NAMES);

/** What a cdk.out splices: an import of an export, a nested stack's output (`Nested` declares it). */
export const spliceable: fc.Arbitrary<unknown> = fc.oneof(
  name.map((n) => ({ 'Fn::ImportValue': n })),
  name.map((n) => ({ 'Fn::GetAtt': ['Nested', `Outputs.${n}`] })),
  name.map((n) => ({
    'Fn::Join': ['', [{ 'Fn::ImportValue': n }, { 'Fn::GetAtt': ['Nested', `Outputs.${n}`] }]],
  })),
);

/** A string that may hold variables and Fn::Sub placeholders over NAMES. */
const text = fc.oneof(
  fc.string({ maxLength: 8 }),
  name,
  name.map((n) => `\${${n}}`),
  name.map((n) => `\${self:custom.${n}}`),
  fc.tuple(name, name).map(([a, b]) => `x\${self:custom.${a}}\${self:custom.${b}}`),
  name.map((n) => `\${Nested.Outputs.${n}}`),
);

/** A JSON value (after JSON.parse: `__proto__` an own key) with intrinsics anywhere in it. */
export const templateValue: fc.Arbitrary<unknown> = fc
  .letrec<{ node: unknown }>((tie) => ({
    node: fc.oneof(
      { depthSize: 'small', withCrossShrink: true },
      text,
      fc.integer(),
      fc.boolean(),
      fc.constant(null),
      fc.array(tie('node'), { maxLength: 4 }),
      fc.dictionary(name, tie('node'), { maxKeys: 3 }),
      fc.tuple(fc.constantFrom(...INTRINSICS), tie('node')).map(([fn, arg]) => ({ [fn]: arg })),
      fc.tuple(name, name).map(([id, output]) => ({ 'Fn::GetAtt': [id, `Outputs.${output}`] })),
      name.map((n) => ({ 'Fn::ImportValue': n })),
      name.map((n) => ({ Ref: n })),
    ),
  }))
  .node.map((value) => JSON.parse(JSON.stringify(value) ?? 'null') as unknown);

/** A mapping from NAMES to template values (conditions, exports, outputs, `custom:`). */
export const namedValues = fc
  .dictionary(name, fc.oneof(templateValue, spliceable), { maxKeys: 5 })
  .map((value) => JSON.parse(JSON.stringify(value)) as Record<string, unknown>);
