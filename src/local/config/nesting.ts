/**
 * How deep a config document (serverless.yml, a template, a cdk.out's JSON, a variable file) may
 * nest. Hand-written and synthesized templates stay under thirty levels; the readers and the
 * walkers over what they read recurse, so a document of 200,000 nested lists would overflow the
 * stack (an untyped RangeError) or take seconds to parse. Checked before a walker runs.
 */
export const MAX_NESTING_DEPTH = 100;

/**
 * The first depth past `max` in a parsed value, found without recursion (the value may be the
 * hostile one); undefined when it stays within. A value met again (a YAML alias names one value
 * from many places) is walked again only from a greater depth, so a thousand aliases of one large
 * list cost one walk of it per depth, not a thousand.
 */
export function nestingPast(value: unknown, max: number = MAX_NESTING_DEPTH): number | undefined {
  const stack: [unknown, number][] = [[value, 0]];
  const deepest = new Map<object, number>();
  for (let next = stack.pop(); next !== undefined; next = stack.pop()) {
    const [node, depth] = next;
    if (node === null || typeof node !== 'object') continue;
    if (depth >= max) return depth + 1;
    if ((deepest.get(node) ?? -1) >= depth) continue;
    deepest.set(node, depth);
    for (const child of Array.isArray(node) ? node : Object.values(node)) stack.push([child, depth + 1]);
  }
  return undefined;
}
