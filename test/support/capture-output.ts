import { vi } from 'vitest';

/** What the code under test writes to stdout and stderr, kept instead of printed (undone by vi.restoreAllMocks). */
export function captureOutput(): { out: string[]; err: string[] } {
  const out: string[] = [];
  const err: string[] = [];
  vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => {
    out.push(String(chunk));
    return true;
  });
  vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => {
    err.push(String(chunk));
    return true;
  });
  return { out, err };
}

/**
 * JSON lines written to stdout and stderr, parsed, in call order across both streams (Powertools'
 * Logger prints warn and error to stderr through a Console made with the Logger).
 */
export function captureJsonLines(): Record<string, unknown>[] {
  const lines: Record<string, unknown>[] = [];
  const take = (chunk: string | Uint8Array) => {
    for (const text of String(chunk).split('\n')) if (text.trim() !== '') lines.push(JSON.parse(text));
    return true;
  };
  vi.spyOn(process.stdout, 'write').mockImplementation(take);
  vi.spyOn(process.stderr, 'write').mockImplementation(take);
  return lines;
}
