/**
 * Wall-clock time as the emulator sees it: record age and batching windows read it. Replay and
 * tests inject a ManualClock so a run never depends on when it happens.
 */
export interface Clock {
  now(): number;
  sleep(ms: number): Promise<void>;
}

/** The real clock: Date.now() and setTimeout. */
export const systemClock: Clock = {
  now: () => Date.now(),
  sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
};

/** Time moves only when told; `sleep` advances it instantly, so waits cost nothing in tests. */
export class ManualClock implements Clock {
  private current: number;
  constructor(startMs = Date.UTC(2026, 0, 1)) {
    this.current = startMs;
  }
  now(): number {
    return this.current;
  }
  advance(ms: number): void {
    this.current += ms;
  }
  set(ms: number): void {
    this.current = ms;
  }
  sleep(ms: number): Promise<void> {
    this.current += ms;
    return Promise.resolve();
  }
}
