import yaml from 'js-yaml';

const CFN_TAGS = [
  'Ref',
  'GetAtt',
  'Sub',
  'Join',
  'Select',
  'Split',
  'If',
  'Equals',
  'Not',
  'And',
  'Or',
  'FindInMap',
  'ImportValue',
  'GetAZs',
  'Base64',
  'Cidr',
  'Condition',
];

/** js-yaml schema that reads CloudFormation short-form tags (`!Ref X`) as their long form. */
const CFN_SCHEMA = yaml.DEFAULT_SCHEMA.extend(
  CFN_TAGS.flatMap((tag) => {
    const key = tag === 'Ref' || tag === 'Condition' ? tag : `Fn::${tag}`;
    return (['scalar', 'sequence', 'mapping'] as const).map(
      (kind) =>
        new yaml.Type(`!${tag}`, {
          kind,
          construct: (data: unknown) => ({
            [key]: tag === 'GetAtt' && typeof data === 'string' ? data.split('.') : data,
          }),
        }),
    );
  }),
);

/**
 * Parses serverless.yml text (or a file it includes) as serverless does (CloudFormation short tags
 * read as their long form), without resolving variables. Throws js-yaml's error for text that is
 * not YAML.
 */
export function parseServerlessYaml(text: string, filename?: string): unknown {
  return yaml.load(text, { schema: CFN_SCHEMA, ...(filename ? { filename } : {}) });
}
