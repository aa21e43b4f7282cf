/**
 * MCP over streamable HTTP at `/api/v1/mcp`, stateless: every POST gets a fresh server and
 * transport. The bearer key of the MCP request authenticates it (401 envelope without one)
 * and is the key each tool call is executed with: the call is `inject()`ed in-process into
 * the same Fastify app, so it meets the same auth, project resolution, idempotency, validation
 * and error envelope as a REST call. GET (server-initiated stream) and DELETE (session end)
 * have nothing to do without sessions and answer 405. `?profile=` and `?tools=` choose the tools
 * the connection lists (./tool-subsets.ts).
 */
import type { FastifyInstance } from 'fastify';
import { ApiError } from '../core/errors';
import { EVENT_STREAM_TYPE } from '../http/event-stream';
import { principalOf, requireKey } from '../http/key-check';
import { closeIfBodyUnread } from '../http/linger';
import { NOSNIFF } from '../http/security-headers';
import type { Operation } from '../operations/registry';
import type { Services } from '../operations/services';
import { callsInRequest, readEventStream } from './run-progress';
import type { ToolCaller } from './server';
import { toolsAskedBy } from './tool-subsets';

export const MCP_PATH = '/api/v1/mcp';

/** Executes a tool's HTTP request inside `app`, as the holder of `authorization`. */
export function injectCaller(app: FastifyInstance, authorization: string): ToolCaller {
  return async (request) => {
    const { onEvent } = request;
    const response = await app.inject({
      method: request.method,
      url: request.url,
      headers: { ...request.headers, authorization, ...(onEvent ? { accept: EVENT_STREAM_TYPE } : {}) },
      ...(request.body === undefined ? {} : { payload: JSON.stringify(request.body) }),
      // A call that waits on a run reads the stream as it comes (./run-progress.ts).
      ...(onEvent ? { payloadAsStream: true } : {}),
      ...(request.signal ? { signal: request.signal } : {}),
    });
    if (!onEvent) return { status: response.statusCode, body: parseBody(response.body) };
    const body = response.stream();
    if (response.statusCode !== 200)
      return { status: response.statusCode, body: parseBody(await text(body)) };
    await readEventStream(body, onEvent).catch((error) => {
      // The call was canceled: the stream was cut on purpose.
      if (!request.signal?.aborted) throw error;
    });
    return { status: 200, body: undefined };
  };
}

async function text(stream: AsyncIterable<Buffer | string>): Promise<string> {
  let out = '';
  for await (const chunk of stream) out += chunk.toString();
  return out;
}

export function parseBody(text: string): unknown {
  if (text === '') return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

export async function mountMcp(app: FastifyInstance, services: Services, operations: readonly Operation[]) {
  const checkKey = requireKey(services);
  app.route({
    method: ['POST', 'GET', 'DELETE'],
    url: MCP_PATH,
    schema: { hide: true },
    // Tool arguments are checked when each call is built (toolRequest), answering a tool error.
    config: { checksOwnBody: true },
    // The key is checked from the headers, before the body is read (key-check.ts); each tool
    // call is then injected with that same key.
    onRequest: (request, reply) => checkKey(request, reply),
    onSend: (request, reply) => closeIfBodyUnread(request, reply),
    handler: async (request, reply) => {
      const authorization = request.headers.authorization;
      if (request.method !== 'POST') {
        reply.header('allow', 'POST');
        throw new ApiError(
          'method_not_allowed',
          'the MCP endpoint is stateless: send JSON-RPC messages with POST; there are no sessions to stream or end',
        );
      }
      const tools = toolsAskedBy(operations, request.query);
      // The MCP SDK is loaded on the first MCP request: ~0.14 s of a start that may never see one.
      const [{ StreamableHTTPServerTransport }, { createMcpServer }] = await Promise.all([
        import('@modelcontextprotocol/sdk/server/streamableHttp.js'),
        import('./server'),
      ]);
      const server = createMcpServer(tools, injectCaller(app, authorization as string), {
        projectPinned: principalOf(request).pinnedProjectId !== null,
      });
      const calls = callsInRequest(request.body);
      const transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: undefined,
        // Progress notifications travel only on an SSE answer; every other answer is one JSON body.
        enableJsonResponse: !calls.wantsProgress,
      });
      // A call waiting on a run lasts as long as the run: the MCP client's timeout bounds it, not
      // svc's idle timeout, which would cut a run quiet for a while.
      if (calls.waits) request.raw.socket?.setTimeout(0);
      // The transport writes the answer itself, past Fastify's onSend hooks: it still carries the
      // headers every answer does (X-Request-Id, nosniff).
      for (const [name, value] of Object.entries(reply.getHeaders()))
        if (value !== undefined) reply.raw.setHeader(name, value);
      reply.raw.setHeader(NOSNIFF.name, NOSNIFF.value);
      reply.hijack();
      reply.raw.on('close', () => {
        void transport.close();
        void server.close();
      });
      try {
        await server.connect(transport);
        await transport.handleRequest(request.raw, reply.raw, request.body);
      } catch (error) {
        request.log.error({ err: error }, 'MCP request failed');
        if (!reply.raw.headersSent) {
          reply.raw.writeHead(500, { 'content-type': 'application/json' });
          reply.raw.end(
            JSON.stringify({
              jsonrpc: '2.0',
              error: { code: -32603, message: 'internal error' },
              id: null,
            }),
          );
        }
      }
    },
  });
}
