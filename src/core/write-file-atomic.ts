import { randomUUID } from 'node:crypto';
import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';

/**
 * Writes `path` whole or not at all: the data goes to a temporary file next to it, which is then
 * renamed into place, so a reader (or a crash) never sees half a file. The temporary file is
 * removed when the write fails. `flush` asks for the data on disk before the rename; `mode` is the
 * new file's permissions (a checkpoint naming a user's data: 0o600).
 */
export async function writeFileAtomic(
  path: string,
  data: string | Uint8Array,
  options: { flush?: boolean; mode?: number } = {},
): Promise<void> {
  const temp = `${path}.${randomUUID().slice(0, 8)}.tmp`;
  try {
    await mkdir(dirname(path), { recursive: true });
    await writeFile(temp, data, {
      flush: options.flush === true,
      ...(options.mode === undefined ? {} : { mode: options.mode }),
    });
    await rename(temp, path);
  } catch (error) {
    await rm(temp, { force: true }).catch(() => undefined);
    throw error;
  }
}
