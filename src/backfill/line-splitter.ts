import { ExportLineTooLongError } from './errors.js';

/** One line of a data file, numbered from 1 as an editor shows it. */
export interface ExportLine {
  readonly line: number;
  readonly text: string;
}

/**
 * Splits decoded text into `\n`-ended lines as it arrives, in time linear in the text: a line
 * spread over many chunks is kept as pieces and joined once, and a line longer than `maxChars` is
 * an ExportLineTooLongError as soon as it is, so memory holds at most one line of `maxChars`.
 */
export class LineSplitter {
  #pieces: string[] = [];
  #length = 0;
  #line = 0;

  constructor(
    readonly key: string,
    readonly maxChars: number,
  ) {}

  /** Lines numbered so far (the last one returned). */
  get line(): number {
    return this.#line;
  }

  /** The lines `chunk` ends, in order; what follows its last `\n` waits for the next chunk. */
  push(chunk: string): ExportLine[] {
    const out: ExportLine[] = [];
    let start = 0;
    for (let end = chunk.indexOf('\n'); end !== -1; end = chunk.indexOf('\n', start)) {
      this.#keep(end - start);
      const piece = chunk.slice(start, end);
      const text = this.#pieces.length === 0 ? piece : this.#take(piece);
      this.#length = 0;
      out.push({ line: ++this.#line, text });
      start = end + 1;
    }
    if (start < chunk.length) {
      this.#keep(chunk.length - start);
      this.#pieces.push(chunk.slice(start));
    }
    return out;
  }

  /** The last line when the text does not end with `\n`. */
  end(): ExportLine | undefined {
    if (this.#pieces.length === 0) return undefined;
    this.#length = 0;
    return { line: ++this.#line, text: this.#take('') };
  }

  #keep(chars: number): void {
    this.#length += chars;
    if (this.#length > this.maxChars)
      throw new ExportLineTooLongError(this.key, this.#line + 1, this.maxChars);
  }

  #take(last: string): string {
    this.#pieces.push(last);
    const text = this.#pieces.join('');
    this.#pieces = [];
    return text;
  }
}
