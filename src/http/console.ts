/**
 * The web console: the built single-page app in web/dist (`npm run build:web`, run by `npm
 * install` through `prepare`), served at `/` on the API's origin. Hashed assets under /assets/
 * are cached for a year as immutable; index.html is never cached and answers every client
 * route (a GET that names no file), but never a path of the API or the operator routes, which
 * keep their JSON 404. Every answer carries a strict Content-Security-Policy: the console runs
 * no inline script or style and talks only to its own origin.
 */
import { readFile, stat } from 'node:fs/promises';
import { extname, resolve, sep } from 'node:path';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../core/errors';
import { packagePath } from '../core/install-paths';
import { sendError } from './errors';

/** web/dist of this checkout (or of the installed package). */
export const CONSOLE_DIST = packagePath('web', 'dist');

export const CONSOLE_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.webmanifest': 'application/manifest+json',
  '.woff2': 'font/woff2',
  '.txt': 'text/plain; charset=utf-8',
};

/** Paths that belong to the API or the operator routes: never answered with the console. */
const NOT_CONSOLE = /^\/(?:api|healthz|metrics|mcp|webhooks|openapi)(?:[/.?]|$)/;

export interface ConsoleOptions {
  /** Where the built console is; default web/dist. */
  root?: string;
}

const MISSING = [
  'The web console is not built: web/dist is missing.',
  '',
  'Run `npm run build:web` (or `npm install`, which builds it) in the svc checkout, then reload.',
  'The API under /api/v1 works without it.',
  '',
].join('\n');

function headers(reply: FastifyReply) {
  reply.header('content-security-policy', CONSOLE_CSP);
  reply.header('x-content-type-options', 'nosniff');
  reply.header('referrer-policy', 'no-referrer');
  reply.header('x-frame-options', 'DENY');
}

async function fileIn(root: string, urlPath: string): Promise<string | null> {
  let decoded: string;
  try {
    decoded = decodeURIComponent(urlPath);
  } catch {
    return null;
  }
  if (decoded.includes('\0')) return null;
  const file = resolve(root, `.${decoded}`);
  if (file !== root && !file.startsWith(root + sep)) return null;
  try {
    return (await stat(file)).isFile() ? file : null;
  } catch {
    return null;
  }
}

export async function mountConsole(app: FastifyInstance, options: ConsoleOptions = {}) {
  const root = resolve(options.root ?? CONSOLE_DIST);

  const sendIndex = async (reply: FastifyReply) => {
    headers(reply);
    let html: Buffer;
    try {
      html = await readFile(resolve(root, 'index.html'));
    } catch {
      return reply
        .code(503)
        .header('cache-control', 'no-store')
        .type('text/plain; charset=utf-8')
        .send(MISSING);
    }
    return reply
      .code(200)
      .header('cache-control', 'no-cache')
      .type(TYPES['.html'] as string)
      .send(html);
  };

  const handler = async (request: FastifyRequest, reply: FastifyReply) => {
    const path = request.url.split('?')[0] ?? '/';
    if (NOT_CONSOLE.test(path)) {
      // What the router answers without this catch-all: an over-long segment could only have been
      // a path parameter (the router's 400), anything else is no route (404).
      const maxParam = app.initialConfig.maxParamLength ?? 100;
      if (path.split('/').some((segment) => segment.length > maxParam)) {
        return sendError(
          reply,
          request,
          new ApiError('validation_failed', 'a path parameter is longer than any id svc issues'),
        );
      }
      return sendError(reply, request, new ApiError('not_found', `no route for ${request.method} ${path}`));
    }
    if (path === '/' || path === '/index.html') return sendIndex(reply);
    const file = await fileIn(root, path);
    if (file) {
      headers(reply);
      const type = TYPES[extname(file).toLowerCase()] ?? 'application/octet-stream';
      const hashed = path.startsWith('/assets/');
      reply.header('cache-control', hashed ? 'public, max-age=31536000, immutable' : 'no-cache');
      return reply
        .code(200)
        .type(type)
        .send(await readFile(file));
    }
    // A missing asset or top-level file is a 404, not the app: a stale chunk must not get HTML.
    if (path.startsWith('/assets/') || (extname(path) !== '' && path.lastIndexOf('/') === 0)) {
      headers(reply);
      return reply
        .code(404)
        .header('cache-control', 'no-store')
        .type('text/plain; charset=utf-8')
        .send(`not found: ${path}\n`);
    }
    return sendIndex(reply);
  };

  app.get('/', { schema: { hide: true } }, handler);
  app.get('/*', { schema: { hide: true } }, handler);
}
