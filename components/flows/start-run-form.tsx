'use client';
// Start a run of one flow with a JSON input (DESIGN: "The dashboard"). The JSON is checked here first; the
// server action checks it against the flow's input schema and answers with the field's error.
import { useActionState, useState } from 'react';
import { startRunAction } from '@/lib/actions/start-run';
import { startRunTextSchema } from '@/lib/contracts/start-run';
import { startRunFieldErrors, type StartRunFormState } from '@/lib/forms/start-run';

export function StartRunForm({ flow, example }: { flow: string; example: string }) {
  const [state, formAction, pending] = useActionState(startRunAction, {} as StartRunFormState);
  const [input, setInput] = useState(example);
  const [local, setLocal] = useState<StartRunFormState['fieldErrors']>();
  const errors = local ?? state.fieldErrors;
  // E_INPUT: the flow's input schema rejected a field; E_JSON: the text is not JSON
  const inputCode = !local && state.inputField ? 'E_INPUT' : 'E_JSON';
  const id = `input-${flow}`;
  return (
    <form
      action={formAction}
      className="start-run"
      data-testid="start-run-form"
      data-flow={flow}
      onSubmit={(e) => {
        const r = startRunTextSchema.safeParse({ flow, input });
        if (!r.success) {
          e.preventDefault();
          setLocal(startRunFieldErrors(r.error));
        } else setLocal(undefined);
      }}
    >
      <input type="hidden" name="flow" value={flow} />
      <label htmlFor={id}>Input (JSON)</label>
      <textarea
        id={id}
        name="input"
        rows={Math.min(14, Math.max(4, input.split('\n').length + 1))}
        spellCheck={false}
        className="mono"
        value={input}
        aria-invalid={errors?.input ? true : undefined}
        aria-describedby={errors?.input ? `${id}-error` : undefined}
        onChange={(e) => {
          setInput(e.target.value);
          setLocal(undefined);
        }}
      />
      {errors?.input ? (
        <p className="field-error" id={`${id}-error`} data-testid="field-error" data-code={inputCode} role="alert">
          {errors.input}
        </p>
      ) : null}
      {errors?.flow ? (
        <p className="field-error" data-testid="field-error" data-code="E_FLOW" role="alert">
          {errors.flow}
        </p>
      ) : null}
      {state.limited && !local ? (
        <p className="field-error" data-testid="field-error" data-code="E_LIMIT" role="alert">
          {state.limited}
        </p>
      ) : null}
      {state.budget && !local ? (
        <p className="field-error" data-testid="field-error" data-code="E_BUDGET" role="alert">
          {state.budget}
        </p>
      ) : null}
      <div className="form-actions">
        <button type="submit" disabled={pending}>
          {pending ? 'Starting…' : `Run ${flow}`}
        </button>
        <button type="button" className="secondary" onClick={() => setInput(example)} disabled={pending || input === example}>
          Reset example
        </button>
      </div>
    </form>
  );
}
