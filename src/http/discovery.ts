/**
 * Discovery, generated from the same declaration as the routes: the OpenAPI 3.1 document
 * (`GET /api/v1/openapi.json`, `info.x-contract-hash`), the tool catalog (`GET /api/v1/tools`)
 * and the MCP endpoint (`/api/v1/mcp`). None of the two documents needs a key.
 */
import fastifySwagger from '@fastify/swagger';
import type { FastifyInstance } from 'fastify';
import { jsonSchemaTransform } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { mountMcp } from '../mcp/http';
import { toolsAskedBy } from '../mcp/tool-subsets';
import { contractHash, toolDescription } from '../operations/contract';
import { type HttpMethod, type Operation, toolInputSchema } from '../operations/registry';
import type { Services } from '../operations/services';
import { type OpenApiDocument, withHttpContract } from './openapi-http';

export interface ToolDescriptor {
  name: string;
  description: string;
  method: HttpMethod;
  path: string;
  input_schema: unknown;
}

export interface ToolCatalog {
  tools: ToolDescriptor[];
  contract_hash: string;
}

export function toolCatalog(operations: readonly Operation[]): ToolCatalog {
  return {
    tools: operations.map((op) => ({
      name: op.tool,
      description: toolDescription(op),
      method: op.method,
      path: op.path,
      input_schema: z.toJSONSchema(toolInputSchema(op), { io: 'input', unrepresentable: 'any' }),
    })),
    contract_hash: contractHash(operations),
  };
}

/** The value of `make()`, computed on first use. */
function lazy<T>(make: () => T): () => T {
  let value: { v: T } | null = null;
  return () => {
    value ??= { v: make() };
    return value.v;
  };
}

export async function mountDiscovery(app: FastifyInstance, services: Services, operations: Operation[]) {
  // Converting every operation's schemas to JSON Schema takes ~0.2 s: on first read, not at start.
  const catalog = lazy(() => toolCatalog(operations));
  const info = {
    title: 'svc code review service API',
    version: '1',
    description:
      'Self-hostable code review service. Every operation is also a model tool (see GET /api/v1/tools and the MCP endpoint at /api/v1/mcp).',
  };
  Object.defineProperty(info, 'x-contract-hash', { enumerable: true, get: () => catalog().contract_hash });
  await app.register(fastifySwagger, {
    openapi: {
      openapi: '3.1.0',
      info,
      servers: [],
      components: {
        securitySchemes: {
          bearer: {
            type: 'http',
            scheme: 'bearer',
            description: 'API key (`svc_ws_…`, `svc_prj_…`) or personal access token (`svc_pat_…`).',
          },
        },
      },
    },
    transform: jsonSchemaTransform,
    // Then what the handlers read and answer besides the zod schemas (src/http/openapi-http.ts).
    transformObject: (document) =>
      'openapiObject' in document
        ? (withHttpContract(
            document.openapiObject as unknown as OpenApiDocument,
            operations,
          ) as unknown as typeof document.openapiObject)
        : document.swaggerObject,
  });

  app.get('/api/v1/openapi.json', { schema: { hide: true } }, async (_request, reply) => {
    return reply.type('application/json').send(app.swagger());
  });
  app.get('/api/v1/tools', { schema: { hide: true } }, async (request, reply) => {
    // `?profile=` and `?tools=` choose a subset, as on the MCP endpoint (src/mcp/tool-subsets.ts).
    const asked = new Set(toolsAskedBy(operations, request.query).map((op) => op.tool));
    const whole = catalog();
    const tools =
      asked.size === operations.length ? whole.tools : whole.tools.filter((t) => asked.has(t.name));
    return reply.type('application/json').send({ ...whole, tools });
  });

  await mountMcp(app, services, operations);
}
