import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import { ReplayFileError } from './errors.js';

/**
 * A replay file's non-blank lines parsed as JSON, with their 1-based line numbers: what every
 * replay source (DynamoDB stream records, Kinesis records) reads before its own shape checks. A
 * line that is not JSON is a ReplayFileError naming it.
 */
export async function* readJsonLines(file: string): AsyncGenerator<{ value: unknown; lineNumber: number }> {
  const lines = createInterface({
    input: createReadStream(file, 'utf8'),
    crlfDelay: Number.POSITIVE_INFINITY,
  });
  let lineNumber = 0;
  for await (const line of lines) {
    lineNumber++;
    if (line.trim() === '') continue;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      throw new ReplayFileError(file, lineNumber, 'not JSON');
    }
    yield { value, lineNumber };
  }
}
