/**
 * The serverless v3 variable pieces both local resolvers share (serverless.yml in
 * serverless-config.ts, infra/ in resources.ts), so they read the same text the same way.
 */

/** A literal variable source: a quoted string, a number, true or false; undefined if not a literal. */
export function literalSource(source: string): { value: string | number | boolean } | undefined {
  const quoted = /^(['"])(.*)\1$/s.exec(source);
  if (quoted) return { value: quoted[2] ?? '' };
  if (/^-?\d+(\.\d+)?$/.test(source)) return { value: Number(source) };
  if (source === 'true' || source === 'false') return { value: source === 'true' };
  return undefined;
}

/**
 * `${strToBool(…)}` as serverless v3 resolves it: the argument (quotes removed), trimmed and
 * lower-cased, is true for 'true' or '1' and false for 'false' or '0'; anything else is an error in
 * the framework, so it is undefined here for the caller to throw its own error.
 */
export function strToBool(argument: string): boolean | undefined {
  const text = argument
    .trim()
    .replace(/^(['"])(.*)\1$/s, '$2')
    .trim()
    .toLowerCase();
  if (text === 'true' || text === '1') return true;
  if (text === 'false' || text === '0') return false;
  return undefined;
}
