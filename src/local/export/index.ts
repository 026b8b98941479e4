// A DynamoDB export to S3 written from DynamoDB Local (which has no ExportTableToPointInTime), in
// the documented layout, so a backfill's tests read what production reads.
export type { LocalExport, LocalExportOptions } from './local-export.js';
export { writeLocalExport } from './local-export.js';
