/**
 * GitHub's failures as CodeHostError reasons, in one place:
 *
 * | GitHub answered | reason | message names |
 * |---|---|---|
 * | 404 (and 410) | `not_found` | what was asked for |
 * | 422 | `invalid_input` | GitHub's message and its field errors |
 * | rate limit (403/429 with `x-ratelimit-remaining: 0`, or a secondary limit), after retries | `unavailable` | when the limit resets / how long to wait |
 * | 401, other 403 | `unavailable` | a token or permission problem, with GitHub's message |
 * | 5xx or no answer, after retries | `unavailable` | the status |
 * | no installation token | `unavailable` | why the token could not be had |
 * | anything else (400, 409, …) | `failed` | GitHub's message |
 */
import { CodeHostError } from '../types';
import { InstallationTokenError } from './client';

interface GitHubRequestError {
  status: number;
  message: string;
  response?: {
    headers?: Record<string, string | undefined>;
    data?: unknown;
  };
}

const isRequestError = (error: unknown): error is GitHubRequestError =>
  typeof error === 'object' &&
  error !== null &&
  typeof (error as { status?: unknown }).status === 'number' &&
  (error as { name?: unknown }).name === 'HttpError';

/** GitHub's own words: `message` plus field errors, without octokit's prefix and doc link. */
function githubMessage(error: GitHubRequestError): string {
  const data = error.response?.data as
    | { message?: string; errors?: (string | { message?: string; field?: string; code?: string })[] }
    | undefined;
  const message = typeof data?.message === 'string' ? data.message : error.message;
  const details = (data?.errors ?? [])
    .map((e) => (typeof e === 'string' ? e : (e.message ?? [e.field, e.code].filter(Boolean).join(' '))))
    .filter((text) => text !== '');
  return details.length > 0 ? `${message}: ${details.join('; ')}` : message;
}

export function isRateLimited(error: GitHubRequestError): boolean {
  const headers = error.response?.headers ?? {};
  return (
    ((error.status === 403 || error.status === 429) && headers['x-ratelimit-remaining'] === '0') ||
    /secondary rate limit/i.test(githubMessage(error)) ||
    (error.status === 429 && headers['retry-after'] !== undefined)
  );
}

/**
 * GitHub's status and own words when it refused a request, for a caller that reads a particular
 * refusal as an answer (a 404 "Branch not protected"); null for anything else, rate limits
 * included (toCodeHostError names those).
 */
export function refusalOf(error: unknown): { status: number; message: string } | null {
  if (!isRequestError(error) || isRateLimited(error)) return null;
  return { status: error.status, message: githubMessage(error) };
}

/** `error` (from a call about `what`, e.g. "pull request 7 of acme/api") as a CodeHostError. */
export function toCodeHostError(error: unknown, what: string): CodeHostError {
  if (error instanceof CodeHostError) return error;
  if (error instanceof InstallationTokenError)
    return new CodeHostError(`${what}: ${error.message}`, 'unavailable', { cause: error });
  if (!isRequestError(error)) {
    return new CodeHostError(
      `${what}: GitHub request failed: ${(error as Error)?.message ?? String(error)}`,
      'failed',
      {
        cause: error,
      },
    );
  }
  const status = error.status;
  const headers = error.response?.headers ?? {};
  const said = githubMessage(error);
  const fail = (message: string, reason: CodeHostError['reason']) =>
    new CodeHostError(`${what}: ${message}`, reason, { cause: error });
  if (status === 404 || status === 410) return fail(`not found on GitHub (${status}: ${said})`, 'not_found');
  if (status === 422) return fail(`GitHub refused the request (422): ${said}`, 'invalid_input');
  if (isRateLimited(error)) {
    const reset = Number(headers['x-ratelimit-reset']);
    const retryAfter = headers['retry-after'];
    const when =
      headers['x-ratelimit-remaining'] === '0' && Number.isFinite(reset) && reset > 0
        ? `the rate limit resets at ${new Date(reset * 1000).toISOString()}`
        : retryAfter !== undefined
          ? `GitHub asks to wait ${retryAfter} s`
          : 'GitHub gave no reset time';
    return fail(`GitHub rate limit exhausted after retries (${status}: ${said}); ${when}`, 'unavailable');
  }
  if (status === 401)
    return fail(
      `GitHub rejected the installation token (401: ${said}); the token is invalid or expired`,
      'unavailable',
    );
  if (status === 403)
    return fail(
      `GitHub denied permission (403: ${said}); check the App's permissions and that it is installed on the repository`,
      'unavailable',
    );
  if (status >= 500) return fail(`GitHub is unavailable (${status}: ${said}) after retries`, 'unavailable');
  return fail(`GitHub answered ${status}: ${said}`, 'failed');
}
