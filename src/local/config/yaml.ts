import { type CollectionTag, Lexer, Pair, parse, Scalar, type ScalarTag, YAMLMap, type YAMLSeq } from 'yaml';
import { MAX_NESTING_DEPTH, nestingPast } from './nesting.js';

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
 * resolving variables. Throws for text that is not YAML, is larger than MAX_YAML_LENGTH, expands
 * aliases past MAX_YAML_ALIAS_COUNT or nests deeper than MAX_NESTING_DEPTH; the callers name the
 * file.
 */
export function parseServerlessYaml(text: string, filename?: string): unknown {
  const name = filename ?? 'the document';
  if (text.length > MAX_YAML_LENGTH) throw new Error(`${name} is larger than ${MAX_YAML_LENGTH} characters`);
  // The `yaml` package composes flow collections recursively: 200,000 `[` take it seconds before
  // the stack overflows. Its lexer is a flat loop, so the flow depth is measured first.
  let flow = 0;
  for (const token of new Lexer().lex(text)) {
    if (token === '[' || token === '{') {
      if (++flow > MAX_NESTING_DEPTH) throw nestedTooDeeply(name);
    } else if (token === ']' || token === '}') flow--;
  }
  let value: unknown;
  try {
    value = parse(text, {
      merge: true,
      customTags: ['timestamp', 'binary', ...CFN_CUSTOM_TAGS],
      maxAliasCount: MAX_YAML_ALIAS_COUNT,
      prettyErrors: true,
    });
  } catch (error) {
    // Block nesting deep enough to overflow the composer (a thousand levels of indentation).
    if (error instanceof RangeError || /call stack/.test((error as Error).message))
      throw nestedTooDeeply(name);
    throw error;
  }
  // Block nesting and aliases placed inside aliases, which the lexer does not see.
  if (nestingPast(value) !== undefined) throw nestedTooDeeply(name);
  return value;
}

function nestedTooDeeply(name: string): Error {
  return new Error(`${name} nests deeper than ${MAX_NESTING_DEPTH} levels`);
}
