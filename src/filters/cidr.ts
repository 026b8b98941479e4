import { BlockList, isIPv4, isIPv6 } from 'node:net';
import { InvalidPatternError } from './errors.js';

/**
 * A CIDR block (`10.0.0.0/24`, `2001:db8::/32`). node:net's BlockList does the address parsing and
 * prefix arithmetic; an IPv4 value never matches an IPv6 block and vice versa, as in event-ruler.
 *
 * event-ruler's own limits are kept so a pattern Lambda would refuse is refused here too: the prefix
 * length must be below the address width (`/32` and `/128` are rejected; write the address as an
 * exact value instead), and IPv6 must be plain hex groups — its address syntax has no room for an
 * embedded dotted IPv4 part (`::ffff:10.0.0.0`) or a zone (`%eth0`), in a block or in an event value.
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
  const family = isIPv4(address) ? 'ipv4' : isPlainIPv6(address) ? 'ipv6' : undefined;
  if (family === undefined) {
    throw new InvalidPatternError(
      'invalid-cidr',
      path,
      `${JSON.stringify(address)} is not an IPv4 or IPv6 address` +
        (isIPv6(address)
          ? ' event-ruler accepts (write IPv6 as hex groups only: no dotted IPv4 part, no %zone)'
          : ''),
    );
  }
  const maxBits = family === 'ipv4' ? 31 : 127;
  const bits = /^\d{1,3}$/.test(bitsText) ? Number(bitsText) : Number.NaN;
  if (!(bits >= 0 && bits <= maxBits)) {
    throw new InvalidPatternError(
      'invalid-cidr',
      path,
      `prefix length ${JSON.stringify(bitsText)} must be 0-${maxBits} for ${family}` +
        (bits === maxBits + 1
          ? ' (event-ruler refuses a single-address block; match the address exactly instead)'
          : ''),
    );
  }
  const list = new BlockList();
  list.addSubnet(address, bits, family);
  const sameFamily = family === 'ipv4' ? isIPv4 : isPlainIPv6;
  return (value: string) => sameFamily(value) && list.check(value, family);
}

const HEX_GROUPS = /^[0-9A-Fa-f:]+$/;

/** IPv6 in the only syntax event-ruler reads: hex groups and colons (no dotted tail, no %zone). */
function isPlainIPv6(text: string): boolean {
  return HEX_GROUPS.test(text) && isIPv6(text);
}
