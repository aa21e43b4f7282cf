/**
 * What never reaches a log line: a credential sent in a URL. Clients sometimes put a key in the
 * query string (`?key=…`, `?access_token=…`); svc refuses it, but the request log would still
 * write the URL as sent, and logs travel further than the database (collectors, tickets, pastes).
 */
import { KEY_KINDS } from './keys';

export const REDACTED = '[redacted]';

/**
 * Query parameters whose value is a credential, whatever it looks like: the common names for a
 * key or token, and any name that says token, secret, password, signature or credential.
 */
const SENSITIVE_NAME =
  /^(key|api[-_]?key|access[-_]?token|token|auth|authorization|code|sig|client[-_]secret)$|token|secret|passw(or)?d|signature|credential/i;

/** An svc key (`svc_ws_…`, `svc_prj_…`, `svc_pat_…`), its underscores also percent-encoded. */
const SVC_KEY = new RegExp(
  `(${Object.values(KEY_KINDS)
    .map((prefix) => prefix.replaceAll('_', '(?:_|%5f)'))
    .join('|')})[A-Za-z0-9_%-]*`,
  'gi',
);

/** `text` with every svc key in it replaced by the key's prefix and REDACTED. */
export function redactKeys(text: string): string {
  return text.replace(SVC_KEY, (_key, prefix: string) => `${prefix}${REDACTED}`);
}

/**
 * A request URL as it may be logged: the value of every sensitive query parameter, and every svc
 * key anywhere in the URL, replaced by REDACTED. The rest stays byte for byte as sent.
 */
export function redactUrl(url: string): string {
  const mark = url.indexOf('?');
  if (mark === -1) return redactKeys(url);
  const query = url
    .slice(mark + 1)
    .split('&')
    .map((part) => {
      const equals = part.indexOf('=');
      const name = equals === -1 ? part : part.slice(0, equals);
      return equals !== -1 && SENSITIVE_NAME.test(decoded(name)) ? `${name}=${REDACTED}` : part;
    })
    .join('&');
  return redactKeys(`${url.slice(0, mark)}?${query}`);
}

function decoded(text: string): string {
  try {
    return decodeURIComponent(text.replaceAll('+', ' '));
  } catch {
    return text;
  }
}
