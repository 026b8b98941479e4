// The backfill state machine's Definition for serverless.yml: infra/backfill-map.asl.json (the one
// definition the tests validate and the local Map runner runs), with the settings' MaxConcurrency
// and ToleratedFailurePercentage, and each `${Name}` placeholder replaced by its CloudFormation
// value. The placeholders are not left to DefinitionSubstitutions because serverless v3 would read
// `${Name}` in the template as one of its own variables.
'use strict';

const { readFileSync } = require('node:fs');
const path = require('node:path');

/** What each placeholder of backfill-map.asl.json stands for in the deployed stack. */
function placeholders(settings) {
  return {
    BackfillFunctionArn: { 'Fn::GetAtt': ['BackfillExportFileLambdaFunction', 'Arn'] },
    ExportBucket: { Ref: 'ArchiveBucket' },
    ResultsBucket: { Ref: 'ArchiveBucket' },
    ResultsPrefix: settings.backfillResultsPrefix,
  };
}

function substitute(node, values) {
  if (typeof node === 'string') {
    const whole = /^\$\{(\w+)\}$/.exec(node);
    if (whole === null) return node;
    if (!(whole[1] in values)) throw new Error(`infra/backfill-map.asl.json: no value for \${${whole[1]}}`);
    return values[whole[1]];
  }
  if (Array.isArray(node)) return node.map((n) => substitute(n, values));
  if (node !== null && typeof node === 'object')
    return Object.fromEntries(Object.entries(node).map(([k, v]) => [k, substitute(v, values)]));
  return node;
}

module.exports = async ({ resolveVariable }) => {
  const definition = JSON.parse(readFileSync(path.join(__dirname, 'backfill-map.asl.json'), 'utf8'));
  const setting = (name) => resolveVariable(`self:custom.tidewater.${name}`);
  const settings = {
    backfillResultsPrefix: await setting('backfillResultsPrefix'),
    backfillMaxConcurrency: Number(await setting('backfillMaxConcurrency')),
    backfillToleratedFailurePercentage: Number(await setting('backfillToleratedFailurePercentage')),
  };
  const map = definition.States.BackfillDataFiles;
  map.MaxConcurrency = settings.backfillMaxConcurrency;
  map.ToleratedFailurePercentage = settings.backfillToleratedFailurePercentage;
  // The comment names the placeholders; the deployed definition has none left.
  definition.Comment = 'tidewater backfill at scale: one child execution per data file of a DynamoDB export';
  return substitute(definition, placeholders(settings));
};
