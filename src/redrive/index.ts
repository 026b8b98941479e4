export type { ExpiredReason, RedriveMessageProblem } from './errors.js';
export { RedriveInvokeError, RedriveMessageError, StreamRangeExpiredError } from './errors.js';
export type { OnFailureMessageRecord, RedriveMessage, RedriveRecord, RedriveSource } from './message.js';
export type { RedriveOptions } from './redrive.js';
export { redrive } from './redrive.js';
export type {
  KeptReason,
  RedriveFailure,
  RedriveItem,
  RedriveKept,
  RedriveProgress,
  RedriveReport,
  StopReason,
} from './report.js';
export { formatProgress, formatReport } from './report.js';
export type { BatchOutcome, LambdaTargetOptions, RedriveTarget, StreamHandlerFunction } from './target.js';
export { handlerTarget, lambdaTarget } from './target.js';
