/**
 * The Fastify application: mounts every declared operation with its auth, project resolution,
 * idempotency and error envelope, plus the routes that are not operations (health, metrics,
 * discovery, MCP).
 */
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import { serializerCompiler, validatorCompiler, type ZodTypeProvider } from 'fastify-type-provider-zod';
import { ApiError } from '../core/errors';
import { RejectionTally } from '../github/webhooks';
import { OPERATIONS } from '../operations';
import { fastifyPath, isWrite, type Operation, type OperationContext } from '../operations/registry';
import type { Services } from '../operations/services';
import { resolveProject } from './auth';
import { type ConsoleOptions, mountConsole } from './console';
import { mountDiscovery } from './discovery';
import { answerClientError, newRequestId, sendError } from './errors';
import { acceptsEventStream, EventStreams } from './event-stream';
import { withIdempotency } from './idempotency';
import { type KeyGuard, KeyTaken, withIdempotentAcknowledgement } from './idempotent-ack';
import { parseJsonWithNestingLimit } from './json-body';
import { principalOf, requireKey } from './key-check';
import { closeIfBodyUnread } from './linger';
import { mountOps } from './ops-routes';
import { addSecurityHeaders } from './security-headers';
import { describeBadQueryEncoding, describeUnsafeInput } from './unsafe-strings';
import { mountWebhooks } from './webhooks';

export interface AppOptions {
  /** Log requests (off in tests). */
  logger?: boolean;
  operations?: Operation[];
  /** Where the built web console is (default web/dist). */
  console?: ConsoleOptions;
}

/** How often Node sweeps connections for the header and request timeouts. */
const CONNECTIONS_CHECK_MS = 500;

export async function buildApp(services: Services, options: AppOptions = {}): Promise<FastifyInstance> {
  const operations = options.operations ?? OPERATIONS;
  // Typed as the plain instance: routes opt into the zod type provider one by one.
  const { timeouts } = services.config;
  const app: FastifyInstance = Fastify({
    loggerInstance: options.logger === false ? undefined : (services.logger as FastifyBaseLogger),
    bodyLimit: services.config.bodyLimit,
    genReqId: newRequestId,
    requestTimeout: timeouts.requestMs,
    connectionTimeout: timeouts.idleMs,
    // Node enforces the header and request timeouts only when it sweeps its connections (every
    // 30 s by default, so a 10 s header timeout closed at ~40 s): sweep often enough that each
    // holds to within half a second.
    http: { connectionsCheckingInterval: CONNECTIONS_CHECK_MS },
    // Errors Fastify raises before routing (a URL that is not valid percent-encoding) and those
    // Node's HTTP parser raises before Fastify (431, framing, timeouts) get the envelope too.
    frameworkErrors: (error, request, reply) => sendError(reply, request, error),
    clientErrorHandler: answerClientError,
    // Every route validates and serializes with its zod schemas. Named here, Fastify never loads
    // its default Ajv and fast-json-stringify compilers (~0.15 s of a cold start).
    // (Fastify types these factories for Ajv and fast-json-stringify; zod's compilers have the
    // same call shape at run time.)
    schemaController: {
      compilersFactory: {
        buildValidator: (() => validatorCompiler) as never,
        buildSerializer: (() => serializerCompiler) as never,
      },
    },
  }) as unknown as FastifyInstance;
  app.server.headersTimeout = timeouts.headersMs;
  // Bodies are JSON only: without this, Fastify would accept text/plain bodies as strings.
  app.removeContentTypeParser('text/plain');
  parseJsonWithNestingLimit(app);
  addSecurityHeaders(app, operations);

  app.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', request.id);
  });
  app.addHook('preValidation', async (request) => {
    const problem =
      describeBadQueryEncoding(request.url) ??
      describeUnsafeInput(request.params, 'path') ??
      describeUnsafeInput(request.query, 'query') ??
      describeUnsafeInput(request.headers, 'header') ??
      // A route that checks its body itself (MCP: per tool call, so the caller gets a tool error).
      ((request.routeOptions.config as { checksOwnBody?: boolean }).checksOwnBody
        ? null
        : describeUnsafeInput(request.body, 'body'));
    if (problem) throw new ApiError('validation_failed', problem);
  });
  app.setErrorHandler((error, request, reply) => sendError(reply, request, error));
  app.setNotFoundHandler((request, reply) =>
    sendError(
      reply,
      request,
      new ApiError('not_found', `no route for ${request.method} ${request.url.split('?')[0]}`),
    ),
  );

  // Discovery registers the OpenAPI generator, which must see the routes as they are added.
  await mountDiscovery(app, services, operations);

  const streams = new EventStreams(app, timeouts.idleMs);
  for (const op of operations) mountOperation(app, services, op, streams);
  const rejections = new RejectionTally(services.db, services.logger);
  app.addHook('onClose', () => rejections.close());
  await mountWebhooks(app, services, rejections);
  await mountOps(app, services, rejections, streams);
  // Last: its catch-all GET answers client routes, never a path the API or the operators own.
  await mountConsole(app, options.console);
  return app;
}

function mountOperation(app: FastifyInstance, services: Services, op: Operation, streams: EventStreams) {
  const status = op.status ?? 200;
  app.withTypeProvider<ZodTypeProvider>().route({
    method: op.method,
    url: fastifyPath(op.path),
    // The key is checked from the headers, before the body is read (key-check.ts).
    ...(op.scope === 'public' ? {} : { onRequest: requireKey(services) }),
    onSend: closeIfBodyUnread,
    schema: {
      operationId: op.tool,
      summary: op.summary,
      ...(op.description ? { description: op.description } : {}),
      tags: [op.path.split('/')[3] ?? 'api'],
      ...(op.params ? { params: op.params } : {}),
      ...(op.query ? { querystring: op.query } : {}),
      ...(op.body ? { body: op.body } : {}),
      response: { [status]: op.response },
      ...(op.scope === 'public' ? {} : { security: [{ bearer: [] }] }),
    },
    handler: async (request, reply) => {
      const principal =
        op.scope === 'public'
          ? { keyId: 'public', kind: 'workspace' as const, workspaceId: '', pinnedProjectId: null }
          : principalOf(request);
      if (op.workspaceWrite && principal.pinnedProjectId) {
        throw new ApiError(
          'forbidden',
          `${op.tool} changes what every project of the workspace sees; a project-pinned key cannot do that, use a workspace key`,
        );
      }
      const params = (request.params ?? {}) as Record<string, string>;
      const projectId =
        op.scope === 'project'
          ? await resolveProject(
              services.db,
              principal,
              params.project_id ?? header(request.headers['project-id']),
            )
          : null;
      let responseStatus: number = status;
      const extraHeaders: Record<string, string> = {};
      // Set for an `acknowledgement` operation sent with an Idempotency-Key (idempotent-ack.ts).
      let keyGuard: KeyGuard | null = null;
      const ctx: OperationContext = {
        services,
        principal,
        workspaceId: principal.workspaceId,
        projectId,
        requestId: request.id,
        headers: Object.fromEntries(Object.entries(request.headers).map(([k, v]) => [k, header(v)])),
        setHeader: (name, value) => {
          extraHeaders[name] = value;
        },
        setStatus: (s) => {
          responseStatus = s;
        },
        acknowledge: async (answer, write) => {
          if (!(await write(keyGuard?.({ status: responseStatus, body: answer }) ?? null)))
            throw new KeyTaken();
        },
      };
      const input = { params, query: request.query ?? {}, body: request.body };
      // A client that asks for a stream gets one where the operation has one (event-stream.ts).
      if (op.eventStream && acceptsEventStream(header(request.headers.accept)))
        return streams.send(reply, await op.eventStream.open(input, ctx));
      const execute = async () => {
        const body = await op.handler(input, ctx);
        return { status: responseStatus, body };
      };
      const idempotencyKey = header(request.headers['idempotency-key']);
      const idempotent = isWrite(op) && idempotencyKey !== undefined && op.scope !== 'public';
      const identity = {
        method: op.method,
        path: request.url.split('?')[0] ?? op.path,
        body: request.body,
        projectId,
      };
      const result =
        idempotent && op.acknowledgement
          ? await withIdempotentAcknowledgement(services.db, principal, idempotencyKey, identity, (guard) => {
              keyGuard = guard;
              return execute();
            })
          : idempotent
            ? await withIdempotency(services.db, principal, idempotencyKey, identity, execute)
            : { ...(await execute()), replayed: false };
      if (result.replayed) reply.header('idempotent-replayed', 'true');
      for (const [name, value] of Object.entries(extraHeaders)) reply.header(name, value);
      // Replays were validated when first sent; send them byte-for-byte as recorded.
      if (result.replayed) {
        return reply
          .code(result.status)
          .type('application/json')
          .serializer(JSON.stringify)
          .send(result.body);
      }
      return reply.code(result.status).send(result.body);
    },
  });
}

function header(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}
