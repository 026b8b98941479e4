import { BlockList, isIPv4, isIPv6 } from 'node:net';
import { InvalidPatternError } from './errors.js';

/**
 * A CIDR block (`10.0.0.0/24`, `2001:db8::/32`). node:net's BlockList does the address parsing and
 * prefix arithmetic; an IPv4 value never matches an IPv6 block and vice versa, as in event-ruler.
 */
export type CidrMatcher = (value: string) => boolean;

export function compileCidr(text: unknown, path: string): CidrMatcher {
  if (typeof text !== 'string') {
    throw new InvalidPatternError(
      'invalid-cidr',
      path,
      `cidr takes a string such as "10.0.0.0/24", got ${JSON.stringify(text)}`,
    );
  }
  const slash = text.indexOf('/');
  if (slash < 0 || slash !== text.lastIndexOf('/')) {
    throw new InvalidPatternError(
      'invalid-cidr',
      path,
      `${JSON.stringify(text)} is not a CIDR block: one "/" is required`,
    );
  }
  const address = text.slice(0, slash);
  const bitsText = text.slice(slash + 1);
  const family = isIPv4(address) ? 'ipv4' : isIPv6(address) ? 'ipv6' : undefined;
  if (family === undefined) {
    throw new InvalidPatternError(
      'invalid-cidr',
      path,
      `${JSON.stringify(address)} is not an IPv4 or IPv6 address`,
    );
  }
  const maxBits = family === 'ipv4' ? 32 : 128;
  const bits = /^\d{1,3}$/.test(bitsText) ? Number(bitsText) : Number.NaN;
  if (!(bits >= 0 && bits <= maxBits)) {
    throw new InvalidPatternError(
      'invalid-cidr',
      path,
      `prefix length ${JSON.stringify(bitsText)} must be 0-${maxBits} for ${family}`,
    );
  }
  const list = new BlockList();
  list.addSubnet(address, bits, family);
  const sameFamily = family === 'ipv4' ? isIPv4 : isIPv6;
  return (value: string) => sameFamily(value) && list.check(value, family);
}
