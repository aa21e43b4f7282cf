/**
 * The contract hash: SHA-256 hex of the canonical JSON of the declaration (every operation's
 * tool, method, path, scope, status, notImplemented and the JSON Schemas of its params, query,
 * body and response, and of its stream's events where it has one). Any change to a route or a schema changes the hash; the OpenAPI document
 * (`info.x-contract-hash`) and the tool catalog carry it so clients can detect drift.
 */
import { createHash } from 'node:crypto';
import { stringify } from 'safe-stable-stringify';
import { z } from 'zod';
import type { Operation } from './registry';

/** JSON Schema of a zod schema, as the contract sees it (input side for requests). */
export function jsonSchemaOf(schema: z.ZodType | undefined, io: 'input' | 'output'): unknown {
  if (!schema) return null;
  return z.toJSONSchema(schema, { io, unrepresentable: 'any' });
}

export function declarationOf(operations: readonly Operation[]) {
  // Sorted by tool: the contract is the set of operations, not the order files are aggregated in.
  return [...operations]
    .sort((a, b) => (a.tool < b.tool ? -1 : a.tool > b.tool ? 1 : 0))
    .map((op) => ({
      tool: op.tool,
      method: op.method,
      path: op.path,
      scope: op.scope,
      status: op.status ?? 200,
      notImplemented: op.notImplemented === true,
      params: jsonSchemaOf(op.params, 'input'),
      query: jsonSchemaOf(op.query, 'input'),
      body: jsonSchemaOf(op.body, 'input'),
      response: jsonSchemaOf(op.response, 'output'),
      // Only where there is one, so operations without a stream keep their canonical form.
      ...(op.eventStream ? { eventStream: jsonSchemaOf(op.eventStream.event, 'output') } : {}),
    }));
}

export function contractHash(operations: readonly Operation[]): string {
  const canonical = stringify(declarationOf(operations));
  if (canonical === undefined) throw new Error('the declaration has no JSON form');
  return createHash('sha256').update(canonical).digest('hex');
}

/** A tool's description (catalog and MCP): the summary, then the longer description when there is one. */
export function toolDescription(op: Operation): string {
  const parts = [op.summary, op.description].filter((s): s is string => Boolean(s));
  if (op.notImplemented) parts.push('(Not implemented yet: answers 501 not_implemented.)');
  return parts.join('\n\n');
}
