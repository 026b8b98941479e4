import { didYouMean } from '../core/did-you-mean.js';
import { TidewaterError } from '../core/errors.js';
import { resolveEnvironment } from '../local/config/service-resources.js';
import {
  type LocalApp,
  type ResourceReferences,
  ServerlessConfigError,
  type StreamFunctionSettings,
  TemplateReadError,
} from '../local/index.js';
import { isEndpointVariable } from '../local/servers/process-env.js';

/** `-f key`, or the only function with a DynamoDB stream mapping when none is named. */
export async function streamFunctionOf(
  app: LocalApp,
  key: string | undefined,
): Promise<StreamFunctionSettings> {
  if (key !== undefined) return (await namedStreamFunctions(app, [key]))[0] as StreamFunctionSettings;
  const all = await app.streamFunctions();
  if (all.length === 1) return all[0] as StreamFunctionSettings;
  throw app.error(
    all.length === 0
      ? 'no function has a DynamoDB stream event'
      : `several functions have a DynamoDB stream event; pick one with -f (${all.map((f) => f.key).join(', ')})`,
  );
}

/**
 * The stream functions `-f` names. A key that is not one of them fails as the app's reader says
 * (no such function, or one without a stream event), with the nearest stream functions' keys.
 */
export async function namedStreamFunctions(
  app: Pick<LocalApp, 'streamFunctions'>,
  keys: readonly string[],
): Promise<StreamFunctionSettings[]> {
  const all = await app.streamFunctions();
  const byKey = new Map(all.map((fn) => [fn.key, fn]));
  const out: StreamFunctionSettings[] = [];
  for (const key of keys) {
    const fn = byKey.get(key) ?? (await withSuggestion(app, key, [...byKey.keys()]));
    out.push(fn);
  }
  return out;
}

async function withSuggestion(
  app: Pick<LocalApp, 'streamFunctions'>,
  key: string,
  known: readonly string[],
): Promise<StreamFunctionSettings> {
  try {
    return (await app.streamFunctions([key]))[0] as StreamFunctionSettings;
  } catch (error) {
    // The reader's own error (its type and file) stays; only the suggestion is added to its text.
    if (error instanceof TidewaterError) error.message += didYouMean(key, known);
    throw error;
  }
}

/**
 * The environment a function's handler gets outside `tidewater start` (a replay): serverless.yml's
 * provider.environment and the function's own (a template's Environment.Variables), literals as written. A CloudFormation reference
 * (`Ref: Bucket`) takes the variable's value from your shell when it is set there, else the name
 * `tidewater start` gives the resource locally; one that resolves to neither is left unset, with
 * a warning. Local endpoints set in the shell (AWS_ENDPOINT_URL_*) win over serverless.yml's.
 */
export async function functionEnvironment(
  app: LocalApp,
  fn: Pick<StreamFunctionSettings, 'key' | 'environment'>,
  options: { warn: (line: string) => void; env?: Readonly<Record<string, string | undefined>> },
): Promise<Record<string, string>> {
  const shell = options.env ?? process.env;
  const intrinsic = Object.entries(fn.environment).filter(
    ([, value]) => value !== null && typeof value === 'object',
  );
  let references: ResourceReferences = { refs: {}, stackName: '', region: 'us-east-1', conditions: {} };
  if (intrinsic.some(([name]) => shell[name] === undefined)) {
    try {
      const endpoint = shell.AWS_ENDPOINT_URL_SQS;
      references = await app.plannedReferences(endpoint ? { sqsEndpoint: endpoint } : {});
    } catch (error) {
      if (!(error instanceof ServerlessConfigError || error instanceof TemplateReadError)) throw error;
      options.warn(`${error.message}; CloudFormation references in ${fn.key}'s environment stay unresolved`);
    }
  }
  const { values, unresolved } = resolveEnvironment(fn.environment, references);
  for (const [name] of intrinsic) {
    const fromShell = shell[name];
    if (fromShell !== undefined) values[name] = fromShell;
  }
  for (const { name, reason } of unresolved) {
    if (shell[name] !== undefined) continue;
    options.warn(
      `${fn.key}: environment ${name} is left unset (${reason}); set it in your shell to give it a value`,
    );
  }
  for (const name of Object.keys(values)) {
    const fromShell = shell[name];
    if (isEndpointVariable(name) && fromShell !== undefined) values[name] = fromShell;
  }
  return values;
}
