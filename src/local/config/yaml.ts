import { type CollectionTag, Pair, parse, Scalar, type ScalarTag, YAMLMap, type YAMLSeq } from 'yaml';

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

/**
 * The largest file read, in UTF-16 code units: CloudFormation takes a template of at most 1 MB,
 * and a config file past this is a mistake or an attack, not a service.
 */
export const MAX_YAML_LENGTH = 1024 * 1024;

/**
 * How many alias expansions one document may make (the `yaml` package's count: each alias times
 * the aliases inside what it names). A "billion laughs" makes millions from a few hundred bytes;
 * hand-written anchors in a serverless.yml make a few dozen.
 */
export const MAX_YAML_ALIAS_COUNT = 1000;

/** CloudFormation short-form tags (`!Ref X`) read as their long form, on scalars, lists and maps. */
const CFN_CUSTOM_TAGS = CFN_TAGS.flatMap((tag): (ScalarTag | CollectionTag)[] => {
  const key = tag === 'Ref' || tag === 'Condition' ? tag : `Fn::${tag}`;
  const wrap = (node: YAMLMap | YAMLSeq) => {
    const map = new YAMLMap();
    map.items.push(new Pair(new Scalar(key), node));
    return map;
  };
  return [
    {
      tag: `!${tag}`,
      resolve: (text: string) => ({ [key]: tag === 'GetAtt' ? text.split('.') : text }),
    },
    { tag: `!${tag}`, collection: 'seq', resolve: wrap },
    { tag: `!${tag}`, collection: 'map', resolve: wrap },
  ];
});

/**
 * Parses serverless.yml text (or a file it includes) as serverless does (CloudFormation short tags
 * read as their long form, `<<` merge keys and timestamps as js-yaml reads them), without
 * resolving variables. Throws for text that is not YAML, is larger than MAX_YAML_LENGTH or
 * expands aliases past MAX_YAML_ALIAS_COUNT; the callers name the file.
 */
export function parseServerlessYaml(text: string, filename?: string): unknown {
  if (text.length > MAX_YAML_LENGTH)
    throw new Error(`${filename ?? 'the document'} is larger than ${MAX_YAML_LENGTH} characters`);
  return parse(text, {
    merge: true,
    customTags: ['timestamp', 'binary', ...CFN_CUSTOM_TAGS],
    maxAliasCount: MAX_YAML_ALIAS_COUNT,
    prettyErrors: true,
  });
}
