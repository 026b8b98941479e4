import { InvalidPatternError } from './errors.js';

/**
 * A CIDR block (`10.0.0.0/24`, `2001:db8::/32`): the address parsed to bytes and the first `bits`
 * bits compared; an IPv4 value never matches an IPv6 block and vice versa, as in event-ruler.
 * Parsed here rather than with node:net's BlockList, which a route compiler would otherwise load
 * into every Lambda cold start (~3 ms) for an operator few patterns use.
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
  const network = parseIPv4(address) ?? parseIPv6(address);
  if (network === undefined) {
    throw new InvalidPatternError(
      'invalid-cidr',
      path,
      `${JSON.stringify(address)} is not an IPv4 or IPv6 address` +
        (/[.%]/.test(address) && address.includes(':')
          ? ' event-ruler accepts (write IPv6 as hex groups only: no dotted IPv4 part, no %zone)'
          : ''),
    );
  }
  const family = network.length === 4 ? 'ipv4' : 'ipv6';
  const maxBits = network.length * 8 - 1;
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
  const parse = family === 'ipv4' ? parseIPv4 : parseIPv6;
  return (value: string) => {
    const bytes = parse(value);
    return bytes !== undefined && samePrefix(bytes, network, bits);
  };
}

/** Whether the first `bits` bits of two addresses of the same family are equal. */
function samePrefix(a: Uint8Array, b: Uint8Array, bits: number): boolean {
  const whole = bits >> 3;
  for (let i = 0; i < whole; i++) if (a[i] !== b[i]) return false;
  const rest = bits & 7;
  if (rest === 0) return true;
  const mask = (0xff << (8 - rest)) & 0xff;
  return (a[whole]! & mask) === (b[whole]! & mask);
}

const OCTET = /^(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]\d|\d)$/;

/** Dotted-quad IPv4 as node:net's isIPv4 reads it (no leading zeros), or undefined. */
function parseIPv4(text: string): Uint8Array | undefined {
  const parts = text.split('.');
  if (parts.length !== 4) return undefined;
  const out = new Uint8Array(4);
  for (let i = 0; i < 4; i++) {
    const part = parts[i]!;
    if (!OCTET.test(part)) return undefined;
    out[i] = Number(part);
  }
  return out;
}

const HEX_GROUP = /^[0-9A-Fa-f]{1,4}$/;

/**
 * IPv6 in the only syntax event-ruler reads: up to eight hex groups of 1-4 digits and at most one
 * `::` (no dotted IPv4 tail, no %zone), or undefined.
 */
function parseIPv6(text: string): Uint8Array | undefined {
  const halves = text.split('::');
  if (halves.length > 2) return undefined;
  const head = halves[0] === '' ? [] : halves[0]!.split(':');
  const tail = halves.length === 1 || halves[1] === '' ? [] : halves[1]!.split(':');
  const groups = head.length + tail.length;
  if (halves.length === 1 ? groups !== 8 : groups > 7) return undefined;
  const out = new Uint8Array(16);
  for (let i = 0; i < groups; i++) {
    const group = i < head.length ? head[i]! : tail[i - head.length]!;
    if (!HEX_GROUP.test(group)) return undefined;
    const at = i < head.length ? i : 8 - groups + i;
    const value = Number.parseInt(group, 16);
    out[at * 2] = value >> 8;
    out[at * 2 + 1] = value & 0xff;
  }
  return out;
}
