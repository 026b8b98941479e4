// The rule for the archive bucket's key prefixes (archivePrefix / deadLetterPrefix), shared by the
// archive handler's cold start and the archive's settings rules (archive-rules.ts, which
// `npm run package` and the CDK's TtlArchive apply), so they cannot disagree about which prefixes deploy.
//
// Each prefix ends the archive role's IAM resource `<bucket>/<prefix>*`, and archivePrefix is the
// Prefix of the bucket's Glacier lifecycle rule. An empty prefix would make the grant `<bucket>/*`
// (and the lifecycle rule the whole bucket); a `*` or `?` is an IAM wildcard that widens the grant;
// a leading `/` points it at keys the sinks never write (they strip it); a missing trailing `/`
// would also cover `<prefix>-other/...`. Hence: one or more segments, each ending in `/`.
// Kept free of imports so it bundles alone.

const KEY_PREFIX_PATTERN = /^(?:[A-Za-z0-9._=-]+\/)+$/;

export function isKeyPrefix(value: unknown): value is string {
  return typeof value === 'string' && KEY_PREFIX_PATTERN.test(value);
}

/** What a key prefix must be, and why. */
export const KEY_PREFIX_RULE =
  'one or more segments of letters, digits, `.`, `_`, `=`, `-`, each ending in `/`: it ends the IAM ' +
  'resource <bucket>/<prefix>*, which an empty prefix would make the whole bucket and a `*` or `?` would widen';

/**
 * The rule for an environment variable holding such a prefix (core/options' custom rule): unset
 * takes serverless.yml's default, set (even empty) must be valid.
 */
export const KEY_PREFIX_OPTION = { kind: 'custom', expected: KEY_PREFIX_RULE, check: isKeyPrefix } as const;

/**
 * Why `value` cannot be used as an archive bucket key prefix, worded to follow the setting's name
 * ("is ...; it must ..."), or undefined when it can.
 */
export function keyPrefixProblem(value: unknown): string | undefined {
  if (isKeyPrefix(value)) return undefined;
  return `is ${String(JSON.stringify(value))}; it must be ${KEY_PREFIX_RULE}`;
}
