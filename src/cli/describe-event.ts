import type { EmulatorEvent } from '../local/index.js';

/** One line per event source mapping decision, for `--verbose` (replay and start). */
export function describeEvent(event: EmulatorEvent): string {
  switch (event.type) {
    case 'invoke':
      return event.window?.final
        ? `invoke   ${event.shardId} #${event.attempt} final invocation of window ${event.window.start}${event.window.terminatedEarly ? ' (terminated early)' : ''}`
        : `invoke   ${event.shardId} #${event.attempt} ${event.sequenceNumbers.length} records ${event.sequenceNumbers[0]}…${event.window ? ` (window ${event.window.start})` : ''}`;
    case 'response':
      return `response ${event.shardId} ${event.outcome}${event.failedSequenceNumber ? ` from ${event.failedSequenceNumber}` : ''}${event.error ? `: ${event.error}` : ''}`;
    case 'filtered':
      return `filtered ${event.shardId} ${event.sequenceNumber}`;
    case 'bisect':
      return `bisect   ${event.shardId} into ${event.sizes.join(' + ')}`;
    case 'retry':
      return `retry    ${event.shardId} #${event.retry} from ${event.firstSequenceNumber} (${event.size} records)`;
    case 'discard':
      return `discard  ${event.shardId} ${event.condition}`;
    case 'expired':
      return `expired  ${event.shardId} ${event.sequenceNumbers.length} records past the stream's 24-hour retention (lost)`;
    case 'checkpoint':
      return `checkpoint ${event.shardId} ${event.sequenceNumber}`;
  }
}
