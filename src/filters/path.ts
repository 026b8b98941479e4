/**
 * Pattern locations for error messages, JSONPath-style (`$.dynamodb.Keys.pk.S[0]`). Built only
 * when an error is raised or while compiling — never on the per-record path.
 */
const PLAIN_KEY = /^[A-Za-z_$][\w$-]*$/;

export function childPath(parent: string, key: string): string {
  return PLAIN_KEY.test(key) ? `${parent}.${key}` : `${parent}[${JSON.stringify(key)}]`;
}

export function indexPath(parent: string, index: number): string {
  return `${parent}[${index}]`;
}

export const ROOT_PATH = '$';
