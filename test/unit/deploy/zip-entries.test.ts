import { crc32, deflateRawSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { ZipFormatError, zipEntries, zipEntryData } from '../../../scripts/package.js';

// scripts/package.js holds the repository's one zip reader (bundle sizes, and the packaging test's
// look into a bundle). The zips here are written byte by byte (PKWARE APPNOTE 4.3.7, 4.3.12,
// 4.3.16) so each test controls exactly the field it breaks; the packaging test reads the real
// zips serverless-esbuild writes.

interface Member {
  name: string;
  text: string;
  method: 0 | 8;
}

function zip(members: Member[], comment = ''): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const member of members) {
    const name = Buffer.from(member.name, 'utf8');
    const data = Buffer.from(member.text, 'utf8');
    const stored = member.method === 8 ? deflateRawSync(data) : data;
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt16LE(member.method, 8);
    local.writeUInt32LE(crc32(data), 14);
    local.writeUInt32LE(stored.length, 18);
    local.writeUInt32LE(data.length, 22);
    local.writeUInt16LE(name.length, 26);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE(20, 4);
    central.writeUInt16LE(20, 6);
    central.writeUInt16LE(member.method, 10);
    central.writeUInt32LE(crc32(data), 16);
    central.writeUInt32LE(stored.length, 20);
    central.writeUInt32LE(data.length, 24);
    central.writeUInt16LE(name.length, 28);
    central.writeUInt32LE(offset, 42);
    locals.push(local, name, stored);
    centrals.push(central, name);
    offset += local.length + name.length + stored.length;
  }
  const directory = Buffer.concat(centrals);
  const commentBytes = Buffer.from(comment, 'latin1');
  const eocd = Buffer.alloc(22);
  eocd.writeUInt32LE(0x06054b50, 0);
  eocd.writeUInt16LE(members.length, 8);
  eocd.writeUInt16LE(members.length, 10);
  eocd.writeUInt32LE(directory.length, 12);
  eocd.writeUInt32LE(offset, 16);
  eocd.writeUInt16LE(commentBytes.length, 20);
  return Buffer.concat([...locals, directory, eocd, commentBytes]);
}

const code = 'export const handler = () => "tidewater";\n'.repeat(40);
const members: Member[] = [
  { name: 'src/handlers/archive-ttl.mjs', text: code, method: 8 },
  { name: 'src/handlers/archive-ttl.mjs.map', text: '{"version":3}', method: 0 },
];

describe('zipEntries / zipEntryData', () => {
  it("lists each entry's name, sizes, compression method and local header, and reads its bytes", () => {
    const file = zip(members);
    const entries = zipEntries(file);
    expect(entries).toEqual([
      {
        name: 'src/handlers/archive-ttl.mjs',
        size: Buffer.byteLength(code),
        compressedSize: deflateRawSync(code).length,
        method: 8,
        localHeaderOffset: 0,
      },
      {
        name: 'src/handlers/archive-ttl.mjs.map',
        size: 13,
        compressedSize: 13,
        method: 0,
        localHeaderOffset: 30 + 28 + deflateRawSync(code).length,
      },
    ]);
    expect(entries.map((entry) => zipEntryData(file, entry).toString('utf8'))).toEqual([
      code,
      '{"version":3}',
    ]);
  });

  it('finds the end record behind a zip comment, even one quoting its signature', () => {
    const plain = zip(members, 'built by tidewater');
    expect(zipEntries(plain).map((e) => e.name)).toEqual(members.map((m) => m.name));
    // Searching backwards meets the quoted signature first; its "comment length" does not reach the
    // end of the file, so it is not the end record.
    const quoting = zip(members, `PK\u0005\u0006${'x'.repeat(30)}`);
    expect(zipEntries(quoting).map((e) => e.name)).toEqual(members.map((m) => m.name));
  });

  it('refuses a file whose end record is not within the last 64 KiB + 22 bytes', () => {
    // A zip comment is at most 65,535 bytes, so an end record further back is not one.
    const file = Buffer.concat([zip(members), Buffer.alloc(65_536)]);
    expect(() => zipEntries(file)).toThrow(ZipFormatError);
    expect(() => zipEntries(file)).toThrow(/no end-of-central-directory record/);
    expect(() => zipEntries(Buffer.from('not a zip'))).toThrow(ZipFormatError);
  });

  it('refuses a central directory that points outside the file or at something else', () => {
    const outside = zip(members);
    outside.writeUInt32LE(outside.length + 100, outside.length - 22 + 16);
    expect(() => zipEntries(outside)).toThrow(ZipFormatError);
    const elsewhere = zip(members);
    elsewhere.writeUInt32LE(0, elsewhere.length - 22 + 16); // the first local header, not the directory
    expect(() => zipEntries(elsewhere)).toThrow(/corrupt zip central directory/);
  });

  it('refuses to read an entry whose local header is missing, truncated or compressed unknowably', () => {
    const file = zip(members);
    const [first, second] = zipEntries(file);
    expect(() => zipEntryData(file, { ...first!, localHeaderOffset: 5 })).toThrow(
      /src\/handlers\/archive-ttl\.mjs: no local file header/,
    );
    expect(() => zipEntryData(file.subarray(0, 100), first!)).toThrow(ZipFormatError);
    const bzip2 = Buffer.from(file);
    bzip2.writeUInt16LE(12, second!.localHeaderOffset + 8);
    expect(() => zipEntryData(bzip2, { ...second!, method: 12 })).toThrow(/compression method 12/);
  });
});
