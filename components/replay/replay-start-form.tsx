'use client';
// Start the replay (server action replayNodeAction) under a cost cap: refused when the estimate is
// over it, stopped before its next attempt once its cost reaches it. On success the browser goes
// to the replay's run page.
import { useActionState } from 'react';
import { replayNodeAction } from '@/lib/actions/replay-node';
import type { ReplayFormState } from '@/lib/forms/replay';

export function ReplayStartForm({ runId, nodeId, suggestedCap }: { runId: string; nodeId: string; suggestedCap: number }) {
  const [state, formAction, pending] = useActionState(replayNodeAction, { status: 'idle' } as ReplayFormState);
  const error = state.status === 'error' ? state : null;
  return (
    <form action={formAction} className="replay-start" data-testid="replay-start-form">
      <input type="hidden" name="runId" value={runId} />
      <input type="hidden" name="node" value={nodeId} />
      <label className="replay-cap">
        <span>Cost cap (USD)</span>
        <input name="cap" inputMode="decimal" defaultValue={String(suggestedCap)} aria-invalid={error?.field === 'cap'} data-testid="replay-cap" />
      </label>
      <button type="submit" disabled={pending} data-testid="replay-start">
        {pending ? 'Starting…' : 'Start replay'}
      </button>
      <span aria-live="polite" className="replay-form-status">
        {error && !pending ? (
          <span className="field-error" data-testid="field-error" data-code={error.code} role="alert">
            <span className="code">{error.code}</span> {error.message}
          </span>
        ) : null}
      </span>
    </form>
  );
}
