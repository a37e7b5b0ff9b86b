'use client';
// The agent policy form (DESIGN: The dashboard): model, ordered fallback models, retries, what
// each bad outcome does, strict. Checked with the same zod schema as the server (and
// `aqven check`) while editing, so E_OUTCOME_FALLBACK shows before anything is sent.
import { useActionState, useMemo, useState } from 'react';
import { saveAgentPolicy } from '@/lib/actions/save-agent-policy';
import { agentPolicyFormSchema, OUTCOME_POLICIES, policyErrors, type FieldError, type PolicyErrors, type PolicyField, type SaveAgentPolicyState } from '@/lib/forms/agent-policy';
import { answerLimit } from '@/lib/engine/policy';
import type { OutcomePolicy } from '@/lib/engine/types';
import { WhatIfPanel } from './what-if-panel';

export interface PolicyValues {
  model: string;
  fallback_models: string[];
  retries: number;
  on_error: OutcomePolicy;
  on_refusal: OutcomePolicy;
  on_truncated: OutcomePolicy;
  strict: boolean;
}

const OUTCOME_HELP: Record<OutcomePolicy, string> = {
  fail: 'the node fails on this turn',
  retry: 'same request, same model (shares the retries budget)',
  fallback: 'same request, next model of the chain (its own full budget)',
};

function toInput(v: PolicyValues) {
  return {
    model: v.model.trim(),
    fallback_models: v.fallback_models.map((m) => m.trim()),
    output: { retries: Number.isFinite(v.retries) ? v.retries : undefined, on_error: v.on_error, on_refusal: v.on_refusal, on_truncated: v.on_truncated, strict: v.strict },
  };
}

function Errors({ list, id }: { list: FieldError[] | undefined; id?: string }) {
  if (!list?.length) return null;
  return (
    <div id={id}>
      {list.map((e, i) => (
        <p key={i} className="field-error" data-testid="field-error" data-code={e.code} role="alert">
          <span className="mono code">{e.code}</span> {e.message}
          {e.hint ? <span className="field-hint">{e.hint}</span> : null}
        </p>
      ))}
    </div>
  );
}

export function AgentPolicyForm({
  agent,
  file,
  initial,
  base,
  models,
  readOnly = false,
}: {
  agent: string;
  file: string;
  initial: PolicyValues;
  base: string;
  models: string[];
  /** the viewer may not change policies: the form shows the policy, disabled, without its buttons */
  readOnly?: boolean;
}) {
  const [state, formAction, pending] = useActionState(saveAgentPolicy, {} as SaveAgentPolicyState);
  const [v, setV] = useState<PolicyValues>(initial);
  const [touched, setTouched] = useState(false);
  const [submitted, setSubmitted] = useState(false);
  // a fresh key per row, so moving rows moves their inputs too
  const [rowKeys, setRowKeys] = useState(() => initial.fallback_models.map((_, i) => i));
  const [nextKey, setNextKey] = useState(initial.fallback_models.length);

  const local = useMemo<PolicyErrors>(() => {
    const r = agentPolicyFormSchema.safeParse(toInput(v));
    return r.success ? {} : policyErrors(r.error);
  }, [v]);
  const hasLocal = Object.keys(local).length > 0;
  // the draft as the server reads it, for the what-if; null while a field does not pass the check
  const draft = useMemo(() => {
    const r = agentPolicyFormSchema.safeParse(toInput(v));
    return r.success ? r.data : null;
  }, [v]);
  // the server's answer describes what was posted; once the user edits again, the live check takes over
  const errors: PolicyErrors = touched || (submitted && hasLocal) ? local : (state.errors ?? {});
  const err = (f: PolicyField) => errors[f];
  const fallbackErrors = (i: number) => errors.fallback_models?.filter((e) => e.index === i);
  const listErrors = errors.fallback_models?.filter((e) => e.index === undefined);

  const update = (patch: Partial<PolicyValues>) => {
    setV((old) => ({ ...old, ...patch }));
    setTouched(true);
  };
  const setFallbacks = (list: string[], keys: number[]) => {
    setRowKeys(keys);
    update({ fallback_models: list });
  };
  const move = (i: number, d: -1 | 1) => {
    const j = i + d;
    if (j < 0 || j >= v.fallback_models.length) return;
    const list = [...v.fallback_models];
    const keys = [...rowKeys];
    [list[i], list[j]] = [list[j]!, list[i]!];
    [keys[i], keys[j]] = [keys[j]!, keys[i]!];
    setFallbacks(list, keys);
  };
  const remove = (i: number) =>
    setFallbacks(
      v.fallback_models.filter((_, k) => k !== i),
      rowKeys.filter((_, k) => k !== i),
    );
  const add = () => {
    setFallbacks([...v.fallback_models, ''], [...rowKeys, nextKey]);
    setNextKey(nextKey + 1);
  };

  const saved = state.ok && !touched;
  const currentBase = state.base ?? base;
  const dirty = JSON.stringify(v) !== JSON.stringify(initial) || touched;

  return (
    <form
      action={(fd) => {
        setTouched(false);
        return formAction(fd);
      }}
      className="policy-form panel"
      aria-label={`Policy of agent ${agent}`}
      noValidate
      onSubmit={(e) => {
        setSubmitted(true);
        if (hasLocal) e.preventDefault();
      }}
    >
      <input type="hidden" name="agent" value={agent} />
      <input type="hidden" name="base" value={currentBase} />
      <fieldset className="plain-fieldset" disabled={readOnly}>
        <datalist id="known-models">
          {models.map((m) => (
            <option key={m} value={m} />
          ))}
        </datalist>

        <div className="field">
          <label htmlFor="policy-model">Model</label>
          <input
            id="policy-model"
            name="model"
            className="mono wide"
            list="known-models"
            value={v.model}
            onChange={(e) => update({ model: e.target.value })}
            aria-invalid={err('model') ? true : undefined}
            aria-describedby="policy-model-errors"
            autoComplete="off"
          />
          <Errors list={err('model')} id="policy-model-errors" />
        </div>

        <div className="field" role="group" aria-labelledby="policy-fallbacks-label">
          <span id="policy-fallbacks-label" className="label">
            Fallback models
          </span>
          <span className="help">tried in this order by on_* = fallback; each gets its own retries + 1 answers</span>
          {v.fallback_models.length === 0 ? <p className="muted none">No fallback models.</p> : null}
          <ol className="fallback-list">
            {v.fallback_models.map((m, i) => (
              <li key={rowKeys[i]} data-testid="fallback-model-row">
                <span className="muted mono idx">{i + 1}.</span>
                <input
                  name="fallback_models"
                  className="mono wide"
                  list="known-models"
                  aria-label={`Fallback model ${i + 1}`}
                  value={m}
                  onChange={(e) => {
                    const list = [...v.fallback_models];
                    list[i] = e.target.value;
                    update({ fallback_models: list });
                  }}
                  aria-invalid={fallbackErrors(i)?.length ? true : undefined}
                  autoComplete="off"
                />
                <button type="button" className="icon" onClick={() => move(i, -1)} disabled={i === 0} aria-label={`Move fallback model ${i + 1} up`} title="Move up">
                  ↑
                </button>
                <button
                  type="button"
                  className="icon"
                  onClick={() => move(i, 1)}
                  disabled={i === v.fallback_models.length - 1}
                  aria-label={`Move fallback model ${i + 1} down`}
                  title="Move down"
                >
                  ↓
                </button>
                <button type="button" className="icon danger" onClick={() => remove(i)} aria-label={`Remove fallback model ${i + 1}`} title="Remove">
                  ✕
                </button>
                <Errors list={fallbackErrors(i)} />
              </li>
            ))}
          </ol>
          <button type="button" className="secondary small" onClick={add}>
            + Add fallback model
          </button>
          <Errors list={listErrors} />
        </div>

        <div className="field-row">
          <div className="field">
            <label htmlFor="policy-retries">Retries</label>
            <input
              id="policy-retries"
              name="retries"
              type="number"
              min={0}
              max={10}
              step={1}
              className="mono narrow"
              value={Number.isFinite(v.retries) ? v.retries : ''}
              onChange={(e) => update({ retries: e.target.value === '' ? NaN : Number(e.target.value) })}
              aria-invalid={err('output.retries') ? true : undefined}
            />
            <span className="help">one model answers at most {Number.isFinite(v.retries) ? answerLimit(v) : 'retries + 1'} times per node (retry and repair share it)</span>
            <Errors list={err('output.retries')} />
          </div>
          <div className="field checkbox">
            <label htmlFor="policy-strict">
              <input id="policy-strict" name="strict" type="checkbox" checked={v.strict} onChange={(e) => update({ strict: e.target.checked })} />
              Strict
            </label>
            <span className="help">{v.strict ? 'the provider constrains output to the schema (needs structured_outputs)' : 'AQVEN validates and repairs the output'}</span>
            <Errors list={err('output.strict')} />
          </div>
        </div>

        <div className="field-row">
          {(
            [
              ['on_error', 'On error', 'output.on_error'],
              ['on_refusal', 'On refusal', 'output.on_refusal'],
              ['on_truncated', 'On truncated', 'output.on_truncated'],
            ] as const
          ).map(([key, label, field]) => (
            <div className="field" key={key}>
              <label htmlFor={`policy-${key}`}>{label}</label>
              <select
                id={`policy-${key}`}
                name={key}
                value={v[key]}
                onChange={(e) => update({ [key]: e.target.value as OutcomePolicy })}
                aria-invalid={err(field) ? true : undefined}
                aria-describedby={err(field) ? `policy-${key}-help policy-${key}-errors` : `policy-${key}-help`}
              >
                {OUTCOME_POLICIES.map((p) => (
                  <option key={p} value={p}>
                    {p}
                  </option>
                ))}
              </select>
              <span className="help" id={`policy-${key}-help`}>
                {OUTCOME_HELP[v[key]]}
              </span>
              <Errors list={err(field)} id={`policy-${key}-errors`} />
            </div>
          ))}
        </div>
      </fieldset>
      {/* outside the fieldset: a viewer may ask what a policy would do, too */}
      <WhatIfPanel agent={agent} draft={draft} />
      <Errors list={err('form')} />
      {readOnly ? (
        <p className="hint" data-testid="read-only">
          Viewers see the policy; an editor may change it.
        </p>
      ) : (
        <div className="form-actions">
          <button type="submit" disabled={pending}>
            {pending ? 'Saving…' : 'Save policy'}
          </button>
          <button
            type="button"
            className="secondary"
            disabled={pending || !dirty}
            onClick={() => {
              setV(initial);
              setRowKeys(initial.fallback_models.map((_, i) => i));
              setTouched(false);
              setSubmitted(false);
            }}
          >
            Reset
          </button>
          <span className="muted mono">writes {file}</span>
          {saved ? (
            <span className="saved" role="status" data-testid="save-status">
              {state.unchanged ? 'Nothing changed.' : `Saved as revision ${state.revision}.`}
            </span>
          ) : null}
        </div>
      )}
    </form>
  );
}
