/**
 * `svc mcp`: the same tools over stdio, for coding agents that launch a local process. Each
 * tool call is forwarded by `fetch` to a running svc (default http://127.0.0.1:8080) with the
 * caller's key, so it meets the server's auth, validation and error envelope. stdout carries
 * the MCP protocol only; diagnostics go to stderr.
 */
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { keyKindOf } from '../core/keys';
import { EVENT_STREAM_TYPE } from '../http/event-stream';
import { OPERATIONS } from '../operations';
import { contractHash } from '../operations/contract';
import type { Operation } from '../operations/registry';
import { parseBody } from './http';
import { readEventStream } from './run-progress';
import { createMcpServer, type ToolCaller } from './server';
import { selectTools, type ToolSelection } from './tool-subsets';

export const DEFAULT_SVC_URL = 'http://127.0.0.1:8080';

/** Executes a tool's HTTP request against the svc at `baseUrl`, with `apiKey`. */
export function fetchCaller(baseUrl: string, apiKey: string): ToolCaller {
  const base = baseUrl.replace(/\/+$/, '');
  return async (request) => {
    const { onEvent } = request;
    try {
      const response = await fetch(base + request.url, {
        method: request.method,
        headers: {
          ...request.headers,
          authorization: `Bearer ${apiKey}`,
          // A call that waits on a run reads the task's event stream (./run-progress.ts).
          accept: onEvent ? EVENT_STREAM_TYPE : 'application/json',
        },
        ...(request.body === undefined ? {} : { body: JSON.stringify(request.body) }),
        ...(request.signal ? { signal: request.signal } : {}),
      });
      if (!onEvent || response.status !== 200 || !response.body)
        return { status: response.status, body: parseBody(await response.text()) };
      await readEventStream(response.body, onEvent);
      return { status: 200, body: undefined };
    } catch (error) {
      // The call was canceled: nobody waits for its answer.
      if (request.signal?.aborted) throw error;
      return {
        status: 503,
        body: {
          error: {
            code: 'service_unreachable',
            message: `could not reach svc at ${base}: ${(error as Error).message}`,
            request_id: null,
          },
        },
      };
    }
  };
}

/** Warns (stderr) when the server's declaration differs from this build's. Never fails. */
async function checkContract(baseUrl: string, operations: readonly Operation[]) {
  try {
    const response = await fetch(`${baseUrl.replace(/\/+$/, '')}/api/v1/tools`);
    if (!response.ok) return;
    const catalog = (await response.json()) as { contract_hash?: string };
    if (catalog.contract_hash && catalog.contract_hash !== contractHash(operations)) {
      process.stderr.write(
        `svc mcp: the server at ${baseUrl} has contract ${catalog.contract_hash}, this build ${contractHash(operations)}; tools may differ\n`,
      );
    }
  } catch (error) {
    process.stderr.write(`svc mcp: svc at ${baseUrl} is not reachable yet (${(error as Error).message})\n`);
  }
}

/**
 * Serves the tools over stdio until stdin closes; resolves then. `apiKey` is the key every
 * call is made with (SVC_API_KEY in the CLI).
 */
export async function mcpStdioCommand(options: {
  url?: string;
  apiKey: string;
  /** The tools to serve (./tool-subsets.ts); all when it names none. */
  selection?: ToolSelection;
}): Promise<void> {
  const url = options.url || DEFAULT_SVC_URL;
  if (!options.apiKey) throw new Error('svc mcp needs an API key: set SVC_API_KEY');
  const tools = selectTools(OPERATIONS, options.selection ?? {});
  await checkContract(url, OPERATIONS);
  const server = createMcpServer(tools, fetchCaller(url, options.apiKey), {
    projectPinned: keyKindOf(options.apiKey) === 'project',
  });
  const transport = new StdioServerTransport();
  const closed = new Promise<void>((resolve) => {
    server.server.onclose = () => resolve();
    process.stdin.once('end', () => resolve());
  });
  await server.connect(transport);
  await closed;
  await server.close();
}
