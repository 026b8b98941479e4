/**
 * What a user of util-dynamodb writes to get bytes from a stream image (workload `binaries`):
 * util-dynamodb's `unmarshall` returns a Lambda-shaped `{ B: "<base64>" }` as the string, but
 * accepts the SDK shape `{ B: Uint8Array }`; so the raw image's binaries (B, BS members, in maps
 * and lists at any depth) are decoded in place, with Node's `Buffer.from(text, 'base64')`, before
 * the image is unmarshalled. Runs after the archive took its raw JSON lines.
 */

type AV = Record<string, unknown>;

function decodeValue(av: AV): void {
  if (typeof av.B === 'string') av.B = Buffer.from(av.B, 'base64');
  else if (av.M !== undefined) decodeBinariesInPlace(av.M as Record<string, AV>);
  else if (av.L !== undefined) for (const v of av.L as AV[]) decodeValue(v);
  else if (av.BS !== undefined) {
    const set = av.BS as unknown[];
    for (let i = 0; i < set.length; i++)
      if (typeof set[i] === 'string') set[i] = Buffer.from(set[i] as string, 'base64');
  }
}

/** Every binary of `image` (an AttributeMap) decoded to a Buffer where it stands. */
export function decodeBinariesInPlace(image: Record<string, AV> | undefined): void {
  if (image === undefined) return;
  for (const key in image) decodeValue(image[key] as AV);
}
