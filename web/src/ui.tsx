/** Pieces every page uses: headings, load states, severity marks, times, the dialog. */
import type { ComponentChildren } from 'preact';
import { useEffect, useId, useRef } from 'preact/hooks';
import type { ApiFailure, Loaded, PullRequest, Severity } from './api';
import { Link, seg } from './router';

export const projectPath = (project: string, ...rest: (string | number)[]) =>
  `/projects/${seg(project)}${rest.map((r) => `/${seg(r)}`).join('')}`;

export function findingsHref(project: string, filters: Record<string, string | undefined>) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(filters)) if (v) q.set(k, v);
  const s = q.toString();
  return `${projectPath(project, 'findings')}${s ? `?${s}` : ''}`;
}

export function timelineHref(project: string, subjectType?: string, subjectId?: string) {
  const q = new URLSearchParams();
  if (subjectType) q.set('subject_type', subjectType);
  if (subjectId) q.set('subject_id', subjectId);
  const s = q.toString();
  return `${projectPath(project, 'timeline')}${s ? `?${s}` : ''}`;
}

let firstHeading = true;

/**
 * The page's one h1; also the document title, and where focus lands after navigating (not on
 * the first page load, where focus stays at the top for the skip link).
 */
export function PageHeading({ children, title }: { children: ComponentChildren; title: string }) {
  const ref = useRef<HTMLHeadingElement>(null);
  useEffect(() => {
    document.title = `${title} · svc console`;
    if (firstHeading) firstHeading = false;
    else ref.current?.focus({ preventScroll: true });
  }, [title]);
  return (
    <h1 ref={ref} tabIndex={-1}>
      {children}
    </h1>
  );
}

export function ErrorBox({ error, what }: { error: ApiFailure; what?: string }) {
  if (error.notAvailable) return <NotAvailable what={what ?? 'This'} detail={error.message} />;
  return (
    <div class="error" role="alert">
      <strong>{what ? `Could not load ${what}: ` : 'Failed: '}</strong>
      {error.message}
      <span class="muted">
        {' '}
        ({error.code}
        {error.requestId ? `, request ${error.requestId}` : ''})
      </span>
    </div>
  );
}

export function NotAvailable({ what, detail }: { what: string; detail?: string }) {
  return (
    <div class="notice" role="status">
      <strong>{what} is not available yet.</strong> The service answers 501 (not implemented) for it; it
      arrives with a later version of svc.
      {detail ? <div class="muted">{detail}</div> : null}
    </div>
  );
}

/** The loading, error or loaded state of one load. */
export function Load<T>({
  loaded,
  what,
  children,
}: {
  loaded: Loaded<T>;
  what: string;
  children: (data: T) => ComponentChildren;
}) {
  if (loaded.error) return <ErrorBox error={loaded.error} what={what} />;
  if (loaded.data === undefined)
    return (
      <p class="muted" role="status">
        Loading {what}…
      </p>
    );
  return <>{children(loaded.data)}</>;
}

const SEV_LABEL: Record<Severity, string> = {
  P0: 'P0 (blocking)',
  P1: 'P1 (should fix)',
  P2: 'P2 (minor)',
};

/** A severity as text and shape, not only colour. */
export function Sev({ s }: { s: Severity }) {
  return (
    <span class={`sev sev-${s}`} title={SEV_LABEL[s]}>
      <span aria-hidden="true">{s === 'P0' ? '■' : s === 'P1' ? '▲' : '●'} </span>
      {s}
    </span>
  );
}

export function Time({ iso }: { iso: string | null | undefined }) {
  if (!iso) return <span class="muted">—</span>;
  const d = new Date(iso);
  return (
    <time dateTime={iso} title={d.toLocaleString()}>
      {relative(d)}
    </time>
  );
}

export function relative(d: Date): string {
  const s = Math.round((Date.now() - d.getTime()) / 1000);
  const abs = Math.abs(s);
  const fmt = (n: number, unit: string) => `${n} ${unit}${n === 1 ? '' : 's'} ${s >= 0 ? 'ago' : 'from now'}`;
  if (abs < 60) return s >= 0 ? 'just now' : 'in a moment';
  if (abs < 3600) return fmt(Math.round(abs / 60), 'minute');
  if (abs < 86400) return fmt(Math.round(abs / 3600), 'hour');
  if (abs < 86400 * 30) return fmt(Math.round(abs / 86400), 'day');
  return d.toLocaleDateString();
}

export type Counts = Record<Severity, number>;
export const noCounts = (): Counts => ({ P0: 0, P1: 0, P2: 0 });

export interface Conclusions {
  'svc.checks.p0_conclusion': string;
  'svc.checks.p1_conclusion': string;
  'svc.checks.p2_conclusion': string;
}
export const DEFAULT_CONCLUSIONS: Conclusions = {
  'svc.checks.p0_conclusion': 'action_required',
  'svc.checks.p1_conclusion': 'neutral',
  'svc.checks.p2_conclusion': 'success',
};

/**
 * The `Service / Review` check as svc reports it: reviewed → from the open findings and the
 * workspace's conclusion settings; skipped/errored → skipped; otherwise still running.
 */
export function checkConclusion(pr: PullRequest, open: Counts, settings: Conclusions): string {
  switch (pr.review_status) {
    case null:
      return 'not reviewed';
    case 'skipped':
    case 'errored':
      return 'skipped';
    case 'reviewed':
      if (open.P0 > 0) return settings['svc.checks.p0_conclusion'];
      if (open.P1 > 0) return settings['svc.checks.p1_conclusion'];
      return settings['svc.checks.p2_conclusion'];
    case 'trigger':
    case 'planning':
      return 'queued';
    default:
      return 'in_progress';
  }
}

export function Conclusion({ value }: { value: string }) {
  const blocking = value === 'action_required' || value === 'failure';
  return (
    <span class={`conclusion c-${value.replace(/[^a-z_]/g, '')}`}>
      {value}
      {blocking ? ' (blocks merge)' : null}
    </span>
  );
}

/** Open findings by severity, each number a link to those findings. */
export function CountLinks({
  project,
  counts,
  filters,
  label,
}: {
  project: string;
  counts: Counts;
  filters: Record<string, string | undefined>;
  label: string;
}) {
  return (
    <span class="counts">
      {(['P0', 'P1', 'P2'] as const).map((s) => (
        <Link
          key={s}
          class={`count sev-${s}${counts[s] === 0 ? ' zero' : ''}`}
          href={findingsHref(project, { ...filters, status: 'open', severity: s })}
          aria-label={`${counts[s]} ${s} open ${label}`}
        >
          {counts[s]} {s}
        </Link>
      ))}
    </span>
  );
}

/** A modal dialog (native <dialog>: focus trapped, Escape closes). */
export function Dialog({
  open,
  title,
  onClose,
  children,
}: {
  open: boolean;
  title: string;
  onClose: () => void;
  children: ComponentChildren;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const d = ref.current;
    if (!d) return;
    if (open && !d.open) d.showModal();
    if (!open && d.open) d.close();
  }, [open]);
  // Unique per dialog: a table of findings holds one closed dialog per row.
  const id = `dlg-${useId()}`;
  return (
    <dialog ref={ref} aria-labelledby={id} onClose={onClose} onCancel={onClose}>
      <h2 id={id}>{title}</h2>
      {open ? children : null}
    </dialog>
  );
}

export function Empty({ children }: { children: ComponentChildren }) {
  return <p class="empty">{children}</p>;
}

export const fmtUsd = (n: number | null | undefined) => (n == null ? '—' : `$${n.toFixed(n < 1 ? 4 : 2)}`);
export const fmtMs = (n: number | null | undefined) =>
  n == null ? '—' : n < 1000 ? `${Math.round(n)} ms` : `${(n / 1000).toFixed(1)} s`;
export const shortSha = (sha: string | null | undefined) => (sha ? sha.slice(0, 8) : '—');

/**
 * A table's scroll box. Focusable: on a phone a wide table scrolls sideways, and a keyboard must
 * be able to reach and scroll it too.
 */
export function TableWrap({ children }: { children: ComponentChildren }) {
  return (
    // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrollable region must be reachable by keyboard
    <div class="table-wrap" tabIndex={0}>
      {children}
    </div>
  );
}

/** A form's outcome: saved (a status) or not (an alert). */
export function FormMessage({ message }: { message: { ok: boolean; text: string } | null }) {
  if (!message) return null;
  return (
    <p class={message.ok ? 'ok' : 'error'} role={message.ok ? 'status' : 'alert'}>
      {message.text}
    </p>
  );
}
