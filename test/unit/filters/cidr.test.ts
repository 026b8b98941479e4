import { BlockList, isIPv4, isIPv6 } from 'node:net';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compileCidr } from '../../../src/filters/cidr.js';

/** Addresses in every textual form: compressed or not, upper/lower case, leading zeros in groups. */
const ipv4 = fc.tuple(fc.nat(255), fc.nat(255), fc.nat(255), fc.nat(255)).map((o) => o.join('.'));
const ipv6 = fc
  .tuple(
    fc.array(fc.nat(0xffff), { minLength: 8, maxLength: 8 }),
    fc.nat(8),
    fc.nat(8),
    fc.boolean(),
    fc.array(fc.boolean(), { minLength: 8, maxLength: 8 }),
  )
  .map(([groups, from, length, upper, padded]) => {
    let hex = groups.map((g, i) => (padded[i] ? g.toString(16).padStart(4, '0') : g.toString(16)));
    if (upper) hex = hex.map((g) => g.toUpperCase());
    const start = Math.min(from, 7);
    const end = Math.min(8, start + length);
    // Compress a run of groups into "::" (a run of one is allowed by RFC 4291's grammar, as node reads it).
    if (end - start >= 1) return `${hex.slice(0, start).join(':')}::${hex.slice(end).join(':')}`;
    return hex.join(':');
  });
/** Near misses as well: the parser must refuse what node refuses. */
const junk = fc.oneof(
  fc.stringMatching(/^[0-9a-fA-F:.]{0,20}$/),
  fc.constantFrom('1.2.3', '01.2.3.4', '256.0.0.1', '1:2:3:4:5:6:7:8:9', '1::2::3', ':1::', '1:::2', '::'),
);

function reference(block: string, value: string): boolean {
  const [address, bits] = block.split('/') as [string, string];
  const family = isIPv4(address) ? 'ipv4' : 'ipv6';
  const sameFamily = family === 'ipv4' ? isIPv4(value) : isIPv6(value) && /^[0-9A-Fa-f:]+$/.test(value);
  if (!sameFamily) return false;
  const list = new BlockList();
  list.addSubnet(address, Number(bits), family);
  return list.check(value, family);
}

describe('cidr matching (property: agrees with node:net BlockList)', () => {
  it('IPv4 blocks', () => {
    fc.assert(
      fc.property(
        ipv4,
        fc.integer({ min: 0, max: 31 }),
        fc.oneof(ipv4, ipv6, junk),
        (network, bits, value) => {
          const block = `${network}/${bits}`;
          expect(compileCidr(block, '$')(value)).toBe(reference(block, value));
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('IPv6 blocks, any spelling of the network and the value', () => {
    fc.assert(
      fc.property(
        ipv6,
        fc.integer({ min: 0, max: 127 }),
        fc.oneof(ipv6, ipv4, junk),
        (network, bits, value) => {
          const block = `${network}/${bits}`;
          expect(compileCidr(block, '$')(value)).toBe(reference(block, value));
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('values in the block match whatever their spelling; neighbours just outside do not', () => {
    const v4 = compileCidr('10.1.128.0/17', '$');
    expect(['10.1.128.0', '10.1.255.255', '10.1.200.7'].map(v4)).toEqual([true, true, true]);
    expect(['10.1.127.255', '10.2.128.0', '010.1.128.1', '10.1.128'].map(v4)).toEqual([
      false,
      false,
      false,
      false,
    ]);
    const v6 = compileCidr('2001:db8::/33', '$');
    expect(['2001:DB8::1', '2001:0db8:7fff:ffff::', '2001:db8:0:0:0:0:0:0'].map(v6)).toEqual([
      true,
      true,
      true,
    ]);
    expect(['2001:db8:8000::', '2001:db9::', '2001:db8::ffff:10.0.0.1', 'fe80::1%eth0'].map(v6)).toEqual([
      false,
      false,
      false,
      false,
    ]);
    expect(compileCidr('0.0.0.0/0', '$')('::')).toBe(false);
    expect(compileCidr('::/0', '$')('1.2.3.4')).toBe(false);
  });
});
