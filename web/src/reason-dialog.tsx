/**
 * A decision with its reason, asked in a dialog: dismissing or reopening a finding, approving or
 * rejecting a plan. The reason is recorded on the object's event; some decisions require one.
 */
import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { Dialog } from './ui';

export function ReasonDialog({
  id,
  verb,
  noun,
  buttonClass,
  buttonLabel,
  required,
  whyRequired,
  hint,
  children,
  submit,
}: {
  /** Unique on the page: the reason field's id. */
  id: string;
  verb: string;
  noun: string;
  buttonClass?: string;
  /** The opening button's accessible name, when its visible verb alone is ambiguous. */
  buttonLabel?: string;
  required: boolean;
  /** Said when a required reason is missing. */
  whyRequired: string;
  hint: ComponentChildren;
  /** What the decision is about, shown above the reason. */
  children: ComponentChildren;
  /** Makes the decision; a thrown error is shown in the dialog. */
  submit: (reason: string) => Promise<void>;
}) {
  const [open, setOpen] = useState(false);
  const [reason, setReason] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const fieldId = `reason-${id}`;
  return (
    <>
      <button
        type="button"
        class={buttonClass ?? 'small'}
        aria-haspopup="dialog"
        aria-label={buttonLabel}
        onClick={() => setOpen(true)}
      >
        {verb}
      </button>
      <Dialog
        open={open}
        title={`${verb} ${noun}`}
        onClose={() => {
          setOpen(false);
          setError(null);
        }}
      >
        <form
          method="dialog"
          class="dialog-form"
          onSubmit={async (event) => {
            event.preventDefault();
            const text = reason.trim();
            if (required && !text) {
              setError(whyRequired);
              return;
            }
            setBusy(true);
            try {
              await submit(text);
              setOpen(false);
              setReason('');
              setError(null);
            } catch (e) {
              setError((e as Error).message);
            } finally {
              setBusy(false);
            }
          }}
        >
          {children}
          <label for={fieldId}>{required ? 'Reason' : 'Reason (optional)'}</label>
          <textarea
            id={fieldId}
            rows={3}
            aria-required={required ? true : undefined}
            value={reason}
            aria-invalid={error ? true : undefined}
            aria-describedby={error ? `${fieldId}-error` : undefined}
            onInput={(e) => setReason((e.target as HTMLTextAreaElement).value)}
          />
          {hint ? <p class="muted small">{hint}</p> : null}
          {error ? (
            <p id={`${fieldId}-error`} class="error" role="alert">
              {error}
            </p>
          ) : null}
          <div class="actions">
            <button type="submit" disabled={busy}>
              {verb} {noun}
            </button>
            <button type="button" class="secondary" onClick={() => setOpen(false)}>
              Cancel
            </button>
          </div>
        </form>
      </Dialog>
    </>
  );
}
