/**
 * The webhook route reads no more than it must from senders nobody has authenticated yet: a
 * request without a signature is answered from its headers while its body is still unsent, and
 * a body over SVC_WEBHOOK_BODY_LIMIT is 413 in the envelope, whoever signed it.
 */
import { randomUUID } from 'node:crypto';
import { type AddressInfo, connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signPayload } from '../../src/github/webhooks/signature';
import { createTestApp, type TestApp } from '../helpers/app';
import { WEBHOOK_PATH, WEBHOOK_SECRET } from '../helpers/webhooks';

const LIMIT = 4096;

describe('webhook body limits', () => {
  let t: TestApp;
  let port: number;

  beforeAll(async () => {
    t = await createTestApp({
      env: { GITHUB_WEBHOOK_SECRET: WEBHOOK_SECRET, SVC_WEBHOOK_BODY_LIMIT: String(LIMIT) },
    });
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    port = (t.app.server.address() as AddressInfo).port;
  });
  afterAll(() => t.close());

  it('answers an unsigned request before its body arrives', async () => {
    // Headers announce 24 MiB, and not one byte of body follows: only an answer from the
    // headers alone can come back.
    const answer = await new Promise<string>((resolve, reject) => {
      const socket = connect(port, '127.0.0.1', () =>
        socket.write(
          `POST ${WEBHOOK_PATH} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nX-GitHub-Event: push\r\nX-GitHub-Delivery: ${randomUUID()}\r\nContent-Length: ${24 * 1024 * 1024}\r\n\r\n`,
        ),
      );
      let received = '';
      socket.on('data', (chunk) => {
        received += chunk.toString('utf8');
        if (received.includes('\r\n\r\n') && received.includes('}}')) {
          socket.destroy();
          resolve(received);
        }
      });
      socket.on('error', reject);
      setTimeout(() => reject(new Error('no answer while the body was unsent')), 5000);
    });
    expect(answer).toMatch(/^HTTP\/1\.1 401/);
    expect(JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4)).error.code).toBe('unauthenticated');
  });

  it('refuses a signed body over the configured limit with 413 in the envelope', async () => {
    const body = JSON.stringify({ action: 'opened', padding: 'x'.repeat(LIMIT) });
    const res = await t.app.inject({
      method: 'POST',
      url: WEBHOOK_PATH,
      headers: {
        'content-type': 'application/json',
        'x-github-event': 'pull_request',
        'x-github-delivery': randomUUID(),
        'x-hub-signature-256': signPayload(WEBHOOK_SECRET, body),
      },
      payload: body,
    });
    expect(res.statusCode).toBe(413);
    expect(res.json().error.code).toBe('payload_too_large');
  });
});
