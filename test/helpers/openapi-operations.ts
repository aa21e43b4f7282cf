/**
 * The operations of an OpenAPI 3.1 document as a fuzz needs them: method, path, parameters
 * (header names lower-cased) and JSON request body schema, with local `$ref`s inlined, whether
 * a key is needed, and whether the document marks the operation `x-svc-status: not_implemented`.
 */
import type { Schema } from './schema-mutations';

export interface Parameter {
  name: string;
  in: 'path' | 'query' | 'header' | 'cookie';
  required?: boolean;
  schema: Schema;
}

export interface DocumentedOperation {
  id: string;
  method: string;
  path: string;
  parameters: Parameter[];
  body: Schema | null;
  /** Behind a key (`security` not empty). */
  secured: boolean;
  notImplemented: boolean;
}

export type Json = Record<string, unknown>;

/** `value` with every local `$ref` replaced by what it points at (a ref to itself by `{}`). */
function inlineRefs(value: unknown, document: Json, seen: string[] = []): unknown {
  if (Array.isArray(value)) return value.map((v) => inlineRefs(v, document, seen));
  if (value === null || typeof value !== 'object') return value;
  const ref = (value as Json).$ref;
  if (typeof ref === 'string' && ref.startsWith('#/')) {
    if (seen.includes(ref)) return {};
    const target = ref
      .slice(2)
      .split('/')
      .reduce<unknown>(
        (at, step) => (at as Json | undefined)?.[step.replaceAll('~1', '/').replaceAll('~0', '~')],
        document,
      );
    return inlineRefs(target, document, [...seen, ref]);
  }
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, inlineRefs(v, document, seen)]));
}

export function operationsOf(document: Json): DocumentedOperation[] {
  const found: DocumentedOperation[] = [];
  const paths = document.paths as Record<string, Record<string, Json>>;
  for (const [path, item] of Object.entries(paths)) {
    for (const [method, op] of Object.entries(item)) {
      if (!['get', 'put', 'post', 'patch', 'delete'].includes(method)) continue;
      const parameters = ((inlineRefs(op.parameters ?? [], document) as Parameter[]) ?? []).map((p) => ({
        ...p,
        // Header names are case-insensitive; light-my-request and Node hand them over lower-cased.
        name: p.in === 'header' ? p.name.toLowerCase() : p.name,
      }));
      const requestBody = inlineRefs(op.requestBody, document) as
        | { content?: Record<string, { schema: Schema }> }
        | undefined;
      const security = (op.security ?? document.security ?? []) as unknown[];
      found.push({
        id: op.operationId as string,
        method: method.toUpperCase(),
        path,
        parameters,
        body: requestBody?.content?.['application/json']?.schema ?? null,
        secured: security.length > 0,
        notImplemented: op['x-svc-status'] === 'not_implemented',
      });
    }
  }
  return found;
}
