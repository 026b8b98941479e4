// biome-ignore-all lint/suspicious/noExplicitAny: a packaged CloudFormation template is untyped JSON
import { expect } from 'vitest';

// Reading a packaged template as CloudFormation would deploy it: parameters at their Defaults (a
// deploy passes none), each Fn::If on the branch its condition takes.

export interface Template {
  Resources: Record<
    string,
    { Type: string; Properties: Record<string, any>; DependsOn?: string[]; [attribute: string]: any }
  >;
  Conditions?: Record<string, unknown>;
  Parameters?: Record<string, { Default?: unknown }>;
}

export function resourcesOfType(template: Template, type: string) {
  return Object.entries(template.Resources).filter(([, r]) => r.Type === type);
}

/** `node` with each Ref to a template parameter replaced by its Default: what a deploy without parameter values gets. */
export function withDefaults(template: Template, node: any): any {
  if (Array.isArray(node)) return node.map((item) => withDefaults(template, item));
  if (node === null || typeof node !== 'object') return node;
  const keys = Object.keys(node);
  if (keys.length === 1 && keys[0] === 'Ref' && template.Parameters?.[node.Ref] !== undefined)
    return template.Parameters[node.Ref]!.Default;
  return Object.fromEntries(Object.entries(node).map(([k, v]) => [k, withDefaults(template, v)]));
}

/** Evaluates the Fn::Not / Fn::Equals / Fn::And / Condition forms the infra files use, parameters at their Defaults. */
export function conditionHolds(template: Template, name: string): boolean {
  const evaluate = (node: any): boolean => {
    if (typeof node?.Condition === 'string') return conditionHolds(template, node.Condition);
    if (Array.isArray(node?.['Fn::Not'])) return !evaluate(node['Fn::Not'][0]);
    if (Array.isArray(node?.['Fn::And'])) return node['Fn::And'].every(evaluate);
    if (Array.isArray(node?.['Fn::Or'])) return node['Fn::Or'].some(evaluate);
    if (Array.isArray(node?.['Fn::Equals']))
      return JSON.stringify(node['Fn::Equals'][0]) === JSON.stringify(node['Fn::Equals'][1]);
    throw new Error(`condition ${name}: unsupported ${JSON.stringify(node)}`);
  };
  return evaluate(withDefaults(template, template.Conditions?.[name]));
}

/** The archive function's DynamoDB stream mapping (serverless names it after function and table). */
export function streamMapping(template: Template) {
  const mapping = template.Resources.ArchiveTtlEventSourceMappingDynamodbRecordsTable;
  expect(mapping?.Type).toBe('AWS::Lambda::EventSourceMapping');
  return mapping!;
}

/** The statements in force: each Fn::If takes the branch its condition selects; AWS::NoValue drops out. */
export function statements(template: Template, document: { Statement: unknown[] }): Record<string, any>[] {
  const out: Record<string, any>[] = [];
  const visit = (node: any) => {
    if (node && typeof node === 'object' && Array.isArray(node['Fn::If'])) {
      const [name, whenTrue, whenFalse] = node['Fn::If'];
      visit(conditionHolds(template, name) ? whenTrue : whenFalse);
    } else if (node && typeof node === 'object' && node.Ref !== 'AWS::NoValue') {
      out.push(withDefaults(template, node));
    }
  };
  for (const statement of document.Statement) visit(statement);
  return out;
}

export const asList = (value: unknown): unknown[] => (Array.isArray(value) ? value : [value]);

/** The statements in force of a role's (one) inline policy. */
export function roleStatements(template: Template, roleId: string): Record<string, any>[] {
  return statements(template, template.Resources[roleId]!.Properties.Policies[0].PolicyDocument);
}

/** A role's statement `sid` in force, whole; undefined when the role has none. */
export function roleStatement(
  template: Template,
  roleId: string,
  sid: string,
): Record<string, any> | undefined {
  return roleStatements(template, roleId).find((s) => s.Sid === sid);
}

/** A `kms:ViaService` value: `service` in the stack's region. */
export const viaService = (service: string) => ({
  'Fn::Join': ['', [`${service}.`, { Ref: 'AWS::Region' }, '.amazonaws.com']],
});

/** A role's statements in force, by Sid: action, resource and condition. */
export function grants(
  template: Template,
  roleId: string,
): Record<string, { Action: unknown; Resource: unknown; Condition: unknown }> {
  return Object.fromEntries(
    roleStatements(template, roleId).map((s) => [
      s.Sid,
      { Action: s.Action, Resource: s.Resource, Condition: s.Condition },
    ]),
  );
}
