import type { RecordVersion } from './record-version.js';
import type { VersionStore } from './version-store.js';

/** A VersionStore in memory, for tests and local runs: one process, one sink. */
export class MemoryVersionStore implements VersionStore {
  readonly #versions = new Map<string, { version: RecordVersion; deleted: boolean }>();

  async get(keys: readonly string[]): Promise<ReadonlyMap<string, RecordVersion>> {
    const out = new Map<string, RecordVersion>();
    for (const key of keys) {
      const held = this.#versions.get(key);
      if (held !== undefined) out.set(key, held.version);
    }
    return out;
  }

  async commit(key: string, version: RecordVersion, deleted: boolean): Promise<boolean> {
    const held = this.#versions.get(key);
    if (held !== undefined && !(held.version < version)) return false;
    this.#versions.set(key, { version, deleted });
    return true;
  }

  /** Keys whose last committed version is a delete. */
  tombstones(): string[] {
    return [...this.#versions].filter(([, v]) => v.deleted).map(([key]) => key);
  }
}
