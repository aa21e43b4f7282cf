/**
 * The API's JSON body parser: Fastify's own (with its prototype-poisoning checks), after a check
 * that the body does not nest deeper than JSON_NESTING_LIMIT. A deeper body is 400
 * validation_failed before it is parsed, so no later walk over it can overflow the stack. Every
 * route of the app parses with it, the MCP endpoint and the tool calls it injects included; the
 * webhook route has its own parser (its body is the signed bytes) and checks after verifying.
 */
import type { FastifyInstance } from 'fastify';
import { ApiError } from '../core/errors';
import { nestingRefusal, nestsDeeperThan } from '../core/json-nesting';

export function parseJsonWithNestingLimit(app: FastifyInstance): void {
  const { onProtoPoisoning = 'error', onConstructorPoisoning = 'error' } = app.initialConfig;
  const parseJson = app.getDefaultJsonParser(onProtoPoisoning, onConstructorPoisoning);
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    if (nestsDeeperThan(body as string)) {
      done(new ApiError('validation_failed', nestingRefusal('the request body')), undefined);
      return;
    }
    parseJson(request, body as string, done);
  });
}
