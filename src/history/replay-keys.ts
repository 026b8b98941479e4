import { type KeyIdentity, keyIdentity, keyIdentityOfValues } from '../records/key-identity.js';

/** An attribute value in DynamoDB JSON: an object with exactly one of S, N and B. */
function isTypedValue(value: unknown): boolean {
  if (value === null || typeof value !== 'object' || value instanceof Uint8Array) return false;
  const names = Object.keys(value);
  return names.length === 1 && (names[0] === 'S' || names[0] === 'N' || names[0] === 'B');
}

/**
 * The identity of a key a caller names: in DynamoDB JSON (`{ pk: { S: 'a' } }`, exact for a
 * 38-digit number) or as values (`{ pk: 'a', sk: 1.5 }`). The two cannot be confused: a key's value
 * is never a map. Throws the key identity's own error for anything that is no key.
 */
export function keyIdentityOfGiven(key: Record<string, unknown>): KeyIdentity {
  const values = Object.values(key);
  return values.length > 0 && values.every(isTypedValue) ? keyIdentity(key) : keyIdentityOfValues(key);
}
