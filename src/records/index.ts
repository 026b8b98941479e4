export type { CheckTtlOptions, TtlCheck, TtlProblem } from './check-ttl.js';
export { checkTtl } from './check-ttl.js';
export type { ClassifyOptions, TtlHeuristicOptions } from './classify.js';
export { classifyRecord } from './classify.js';
export type { ToLambdaRecordOptions } from './convert.js';
export { toGetRecordsRecord, toLambdaRecord } from './convert.js';
export type { InvalidAttributeValueReason, MalformedRecordReason } from './errors.js';
export {
  EventSourceMismatchError,
  InvalidAttributeValueError,
  MalformedRecordError,
  NotAStreamEventError,
  UnsupportedValueError,
} from './errors.js';
export type { LambdaKinesisRecord, ToKinesisRecordOptions } from './kinesis-encode.js';
export { toKinesisRecord } from './kinesis-encode.js';
export type { MarshallOptions } from './marshall.js';
export { marshall, marshallValue } from './marshall.js';
export { NumberValue } from './number-value.js';
export type { NumberPolicy } from './numbers.js';
export type { FailureCondition, StreamBatchInfo, StreamInvocationRecord } from './on-failure-record.js';
export { OnFailureRecordError } from './on-failure-record.js';
export type { ExpectedSource, ParseOptions, RecordParser, RecordSource } from './parse.js';
export {
  createRecordParser,
  parseStreamEvent,
  parseStreamRecord,
  streamRecordsOf,
} from './parse.js';
export type {
  AttributeMap,
  AttributeValue,
  ClassifiedRecord,
  InsertRecord,
  Item,
  LambdaStreamEvent,
  LambdaStreamRecord,
  LambdaUserIdentity,
  ModifyRecord,
  RecordKind,
  RecordOfKind,
  RecordOrigin,
  SdkAttributeMap,
  SdkAttributeValue,
  StreamEventName,
  StreamViewType,
  TtlDeleteRecord,
  UserDeleteRecord,
} from './types.js';
export { RECORD_KINDS } from './types.js';
export type { UnmarshallOptions } from './unmarshall.js';
export { unmarshall, unmarshallValue } from './unmarshall.js';
