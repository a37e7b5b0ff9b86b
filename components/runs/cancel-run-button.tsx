'use client';
// "Cancel run" on the page of a queued run (DESIGN: The dashboard): server action cancelRunAction,
// which cancels the run only if no worker has started it yet — checked on the server, so a page
// rendered while the run was queued answers with the run's status instead.
import { useActionState } from 'react';
import { cancelRunAction } from '@/lib/actions/cancel-run';
import type { CancelRunState } from '@/lib/forms/cancel-run';

export function CancelRunButton({ runId }: { runId: string }) {
  const [state, formAction, pending] = useActionState(cancelRunAction, { status: 'idle' } as CancelRunState);
  const done = state.status === 'cancelled';
  return (
    <form action={formAction} className="cancel-run">
      <input type="hidden" name="runId" value={runId} />
      <button type="submit" className="small secondary" data-testid="cancel-run" disabled={pending || done}>
        {pending ? 'Cancelling…' : done ? 'Cancelled' : 'Cancel run'}
      </button>
      <span aria-live="polite">
        {done && !pending ? (
          <span className="saved" data-testid="run-cancelled">
            Cancelled: no worker will run it.
          </span>
        ) : null}
        {state.status === 'error' && !pending ? (
          <span className="field-error" data-testid="field-error" data-code={state.code} role="alert">
            <span className="code">{state.code}</span>
            {state.message}
          </span>
        ) : null}
      </span>
    </form>
  );
}
