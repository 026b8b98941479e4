import { InvalidPatternError } from './errors.js';

/**
 * event-ruler wildcards: `*` is any run of characters (including none); `\*` is a literal
 * asterisk and `\\` a literal backslash; any other escape, and two consecutive `*`, are refused.
 * Compiled once to an anchored RegExp.
 */
export function compileWildcard(text: string, path: string): RegExp {
  let source = '^';
  let previousStar = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i] as string;
    if (c === '*') {
      if (previousStar) {
        throw new InvalidPatternError(
          'invalid-wildcard',
          path,
          `consecutive wildcard characters at index ${i} of ${JSON.stringify(text)}`,
        );
      }
      source += '[\\s\\S]*';
      previousStar = true;
      continue;
    }
    previousStar = false;
    if (c === '\\') {
      const next = text[i + 1];
      if (next !== '*' && next !== '\\') {
        throw new InvalidPatternError(
          'invalid-wildcard',
          path,
          `a backslash may only escape "*" or "\\" (index ${i} of ${JSON.stringify(text)})`,
        );
      }
      source += `\\${next}`;
      i++;
      continue;
    }
    source += c.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
  }
  return new RegExp(`${source}$`, 'u');
}
