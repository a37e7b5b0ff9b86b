'use client';
// The run list's filters: a GET form of selects, so every filtered view is a URL. With scripts it
// navigates on each change and leaves empty parameters out of the URL.
import Link from 'next/link';
import { useRouter } from 'next/navigation';
import { useId, type FormEvent } from 'react';
import { RUN_STATUSES } from '@/lib/dashboard/run-status';
import { ATTEMPT_CAUSES } from '@/lib/shared/run-list-values';
import '@/app/styles/runs.css';

export interface FilterChoices {
  flows: string[];
  agents: string[];
  models: string[];
  causes: string[];
}

const KINDS: [string, string][] = [
  ['flow', 'flow runs'],
  ['replay', 'replays'],
  ['limits', 'limits probes'],
];
const RANGES: [string, string][] = [
  ['15m', 'last 15 minutes'],
  ['1h', 'last hour'],
  ['24h', 'last 24 hours'],
  ['7d', 'last 7 days'],
];

function Select({ name, label, value, options }: { name: string; label: string; value: string; options: (string | [string, string])[] }) {
  const id = `${useId()}-${name}`;
  const opts = options.map((o) => (typeof o === 'string' ? [o, o] : o));
  // a value from the URL that is not a choice (yet) stays selectable
  if (value && !opts.some(([v]) => v === value)) opts.push([value, value]);
  // a label of its own (not wrapping the select): the select's name is the label alone, not "Status any"
  return (
    <div className="filter-field">
      <label htmlFor={id}>{label}</label>
      <select id={id} name={name} defaultValue={value} key={value}>
        <option value="">any</option>
        {opts.map(([v, text]) => (
          <option key={v} value={v}>
            {text}
          </option>
        ))}
      </select>
    </div>
  );
}

export function RunFiltersForm({ choices, values }: { choices: FilterChoices; values: Record<string, string> }) {
  const router = useRouter();
  const go = (form: HTMLFormElement) => {
    const q = new URLSearchParams();
    for (const [k, v] of new FormData(form)) if (typeof v === 'string' && v) q.set(k, v);
    const qs = q.toString();
    router.push(qs ? `/runs?${qs}` : '/runs');
  };
  const onSubmit = (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    go(e.currentTarget);
  };
  const active = Object.entries(values).some(([k, v]) => k !== 'limit' && v);
  return (
    <form className="filters" method="get" action="/runs" onSubmit={onSubmit} onChange={(e) => go(e.currentTarget)} aria-label="Run filters">
      <Select name="status" label="Status" value={values.status ?? ''} options={[...RUN_STATUSES]} />
      <Select name="flow" label="Flow" value={values.flow ?? ''} options={choices.flows} />
      <Select name="agent" label="Agent" value={values.agent ?? ''} options={choices.agents} />
      <Select name="model" label="Model" value={values.model ?? ''} options={choices.models} />
      <Select name="cause" label="Cause" value={values.cause ?? ''} options={[...new Set([...ATTEMPT_CAUSES, ...choices.causes])]} />
      <Select name="retried" label="Retried" value={values.retried ?? ''} options={[['1', 'retried or repaired']]} />
      <Select name="fell_back" label="Fell back" value={values.fell_back ?? ''} options={[['1', 'fell back']]} />
      <Select name="kind" label="Kind" value={values.kind ?? ''} options={KINDS} />
      <Select name="range" label="Time range" value={values.range ?? ''} options={RANGES} />
      {values.from ? <input type="hidden" name="from" value={values.from} /> : null}
      {values.to ? <input type="hidden" name="to" value={values.to} /> : null}
      {values.limit ? <input type="hidden" name="limit" value={values.limit} /> : null}
      <noscript>
        <button type="submit">Apply</button>
      </noscript>
      {active ? (
        <Link href="/runs" className="clear-filters">
          Clear filters
        </Link>
      ) : null}
    </form>
  );
}
