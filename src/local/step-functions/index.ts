// A local runner of a Step Functions Distributed Map over the local S3 server: the backfill's state
// machine definition (infra/backfill-map.asl.json) runs here as deployed, within the limits
// docs/backfill-at-scale.md lists.
export type { ChildResult, LocalMapFunction, LocalMapOptions, LocalMapResult } from './distributed-map.js';
export { runDistributedMap } from './distributed-map.js';
export { MapRunError, UnsupportedDefinitionError } from './errors.js';
