/**
 * Clients that are slow or carry no key cannot hold the API's memory or connections: a request
 * without a valid key is answered 401 from its headers, before its body is read, and its
 * connection is closed after the linger; the header and request timeouts close a slow client
 * when they say, not at Node's next 30 s sweep. Over real sockets, with small timeouts so it
 * runs in seconds (the bounds below are correctness bounds, generous, not performance claims).
 */
import { type AddressInfo, connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LookupGate } from '../../src/http/lookup-gate';
import { createTestApp, type TestApp } from '../helpers/app';

const HEADERS_TIMEOUT_MS = 2_000;
const REQUEST_TIMEOUT_MS = 4_000;
const MiB = 1024 * 1024;

interface Exchange {
  socket: Socket;
  /** Everything the server sent so far. */
  received: () => string;
  /** Resolves when the server closed (or reset) the connection, with ms since connecting. */
  closed: Promise<number>;
}

function open(port: number): Promise<Exchange> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const socket = connect(port, '127.0.0.1');
    let received = '';
    socket.on('data', (chunk) => {
      received += chunk.toString('latin1');
    });
    // Writing into a connection the server closed is part of what is tested: not a failure.
    socket.on('error', () => socket.destroy());
    const closed = new Promise<number>((done) =>
      socket.once('close', () => done(performance.now() - started)),
    );
    socket.once('connect', () => resolve({ socket, received: () => received, closed }));
    socket.once('error', reject);
  });
}

/** Writes `text` one byte every `everyMs` until the socket closes. */
function trickle(socket: Socket, text: string, everyMs: number): void {
  let i = 0;
  const timer = setInterval(() => {
    if (socket.destroyed || i >= text.length) {
      clearInterval(timer);
      return;
    }
    socket.write(text[i++] ?? '');
  }, everyMs);
  socket.once('close', () => clearInterval(timer));
}

const statusOf = (answer: string) => Number(answer.split(' ')[1]);
const envelopeOf = (answer: string) => JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4));

describe('slow and unauthenticated API clients', () => {
  let t: TestApp;
  let port: number;

  beforeAll(async () => {
    t = await createTestApp({
      env: {
        SVC_HEADERS_TIMEOUT_MS: String(HEADERS_TIMEOUT_MS),
        SVC_REQUEST_TIMEOUT_MS: String(REQUEST_TIMEOUT_MS),
      },
    });
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    port = (t.app.server.address() as AddressInfo).port;
  });
  afterAll(() => t.close());

  const postHead = (authorization: string | null, length: number) =>
    [
      'POST /api/v1/projects HTTP/1.1',
      'Host: svc.test',
      'Content-Type: application/json',
      `Content-Length: ${length}`,
      ...(authorization ? [`Authorization: ${authorization}`] : []),
      '',
      '',
    ].join('\r\n');

  it.each([
    ['no key', null],
    ['a malformed key', 'Bearer not-a-svc-key'],
    ['an unknown key', 'Bearer svc_ws_nobody_issued_this_key_000000'],
  ])(
    'answers a request with %s 401 from its headers, while its 1 MiB body is unsent, then closes',
    async (_, authorization) => {
      const exchange = await open(port);
      exchange.socket.write(postHead(authorization, MiB));
      // Not one byte of the body follows: only an answer from the headers can come back.
      await expect.poll(() => exchange.received(), { timeout: 5_000 }).toMatch(/\r\n\r\n\{.*\}$/s);
      const answer = exchange.received();
      expect(statusOf(answer)).toBe(401);
      expect(answer.toLowerCase()).toContain('\r\nconnection: close\r\n');
      expect(envelopeOf(answer).error.code).toBe('unauthenticated');
      // Closed by the server after the linger, though the client never finished (or ended) its body.
      expect(await exchange.closed).toBeLessThan(5_000);
    },
  );

  it('reads the body of a request whose key is valid (the check above is the key, not the size)', async () => {
    const exchange = await open(port);
    const body = JSON.stringify({
      name: 'slow-clients',
      repository: { full_name: 'acme/slow-clients', installation_id: 1 },
    });
    exchange.socket.write(postHead(`Bearer ${t.workspaceKey}`, body.length));
    await new Promise((resolve) => setTimeout(resolve, 300));
    // Nothing is answered while the body is owed...
    expect(exchange.received()).toBe('');
    exchange.socket.write(body);
    await expect.poll(() => exchange.received(), { timeout: 5_000 }).toMatch(/\r\n\r\n\{.*\}$/s);
    // Read and acted on: the repository is not on the (local) code host, so 404, not 401.
    expect(statusOf(exchange.received())).toBe(404);
    expect(envelopeOf(exchange.received()).error.code).toBe('not_found');
    exchange.socket.destroy();
  });

  it('closes a client that sends its headers slowly at the header timeout, with 408', async () => {
    const exchange = await open(port);
    exchange.socket.write('GET /healthz HTTP/1.1\r\n');
    trickle(exchange.socket, `Host: svc.test\r\nX-Slow: ${'x'.repeat(200)}\r\n\r\n`, 100);
    const ms = await exchange.closed;
    expect(ms).toBeGreaterThanOrEqual(HEADERS_TIMEOUT_MS - 100);
    expect(ms).toBeLessThan(HEADERS_TIMEOUT_MS + 1_000);
    expect(statusOf(exchange.received())).toBe(408);
    expect(envelopeOf(exchange.received()).error.code).toBe('request_timeout');
  });

  it('closes a client that sends its body slowly at the request timeout', async () => {
    const exchange = await open(port);
    exchange.socket.write(postHead(`Bearer ${t.workspaceKey}`, 1_000));
    trickle(exchange.socket, `{"name":"${'x'.repeat(980)}`, 100);
    const ms = await exchange.closed;
    expect(ms).toBeGreaterThanOrEqual(REQUEST_TIMEOUT_MS - 100);
    expect(ms).toBeLessThan(REQUEST_TIMEOUT_MS + 1_000);
    expect(statusOf(exchange.received())).toBe(408);
  });
});

describe('the cap on key lookups', () => {
  it('refuses a lookup past the cap with 503 authentication_busy, and admits again once one ends', async () => {
    const gate = new LookupGate(2);
    const pending: (() => void)[] = [];
    const slow = () => new Promise<void>((resolve) => pending.push(resolve));
    const first = gate.run(slow);
    const second = gate.run(slow);
    await expect(gate.run(slow)).rejects.toMatchObject({ code: 'authentication_busy', status: 503 });
    expect(gate.refused).toBe(1);
    for (const resolve of pending) resolve();
    await Promise.all([first, second]);
    expect(gate.inFlight).toBe(0);
    await expect(gate.run(async () => 'read')).resolves.toBe('read');
  });
});
