/** What `tidewater` exits with. Scripts and CI may rely on these; keep them stable. */
export const EXIT = {
  ok: 0,
  /** An unexpected error: a bug, or a server that would not start. */
  error: 1,
  /** The command line was wrong. */
  usage: 2,
  /** The job ran, but its result is not what it should be (e.g. `start`'s checks failed). */
  checkFailed: 3,
  /** A replay handed records to the on-failure destination: Lambda would have lost them. */
  recordsDiscarded: 4,
  /** An aggregation left some totals unwritten, or a compaction / erase stopped part-way; run it again. */
  incomplete: 5,
  /**
   * An archive compaction or erase found nothing where it was told to look (a missing -p, a typo);
   * a redrive read no message (an empty queue, nothing under the prefix).
   */
  nothingFound: 6,
} as const;
