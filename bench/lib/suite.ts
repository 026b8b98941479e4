/** What a benchmark suite module default-exports (bench/suites/<name>.ts). */
export interface SuiteContext {
  quick: boolean;
  log: (message: string) => void;
}

export interface SuiteResult {
  markdown: string;
  data: unknown;
}

export interface Suite {
  name: string;
  title: string;
  run(context: SuiteContext): Promise<SuiteResult>;
}

export function isSuite(value: unknown): value is Suite {
  if (value === null || typeof value !== 'object') return false;
  const s = value as Record<string, unknown>;
  return typeof s.name === 'string' && typeof s.title === 'string' && typeof s.run === 'function';
}
