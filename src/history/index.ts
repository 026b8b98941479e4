// History: the archive replayed through a function's routes — archived changes of a time range,
// of one tenant or some items, delivered as backfill delivers, each once and in order per item.
// Reached through `tidewater/history` (src/history.ts).
export type { ReplayCheckpoint, ShardPosition } from './checkpoint.js';
export type { ReplayArchiveOptions, ReplayProgress, ReplayReport } from './replay-archive.js';
export { replayArchive } from './replay-archive.js';
