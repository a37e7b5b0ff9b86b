'use client';
// The Audit page's filters (DESIGN: The dashboard, "Audit trail"): a GET form of selects and two
// days, so every view is a URL; with scripts it navigates on each change, empty values left out.
// The choices come from the page (this component never reads the trail's kinds itself).
import Link from 'next/link';
import { useRouter } from 'next/navigation';
import { useId, type FormEvent } from 'react';
import type { AuditQuery } from '@/lib/dashboard/audit-filters';
import '@/app/styles/runs.css';
import '@/app/styles/audit.css';

function Select({ name, label, value, options, any }: { name: string; label: string; value: string; options: [string, string][]; any: string }) {
  const id = `${useId()}-${name}`;
  // a value from the URL that is not a choice (an actor not seen yet) stays selectable
  const opts = value && !options.some(([v]) => v === value) ? [...options, [value, value] as [string, string]] : options;
  return (
    <div className="filter-field">
      <label htmlFor={id}>{label}</label>
      <select id={id} name={name} defaultValue={value} key={value}>
        <option value="">{any}</option>
        {opts.map(([v, text]) => (
          <option key={v} value={v}>
            {text}
          </option>
        ))}
      </select>
    </div>
  );
}

function Day({ name, label, value }: { name: string; label: string; value: string }) {
  const id = `${useId()}-${name}`;
  return (
    <div className="filter-field">
      <label htmlFor={id}>{label}</label>
      <input id={id} type="date" name={name} defaultValue={value} key={value} />
    </div>
  );
}

export function AuditFilters({ values, actors, kinds, ranges }: { values: AuditQuery; actors: string[]; kinds: [string, string][]; ranges: [string, string][] }) {
  const router = useRouter();
  const go = (form: HTMLFormElement) => {
    const q = new URLSearchParams();
    for (const [k, v] of new FormData(form)) if (typeof v === 'string' && v) q.set(k, v);
    const qs = q.toString();
    router.push(qs ? `/audit?${qs}` : '/audit');
  };
  const onSubmit = (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    go(e.currentTarget);
  };
  const active = Object.values(values).some(Boolean);
  return (
    <form
      className="filters audit-filters"
      method="get"
      action="/audit"
      onSubmit={onSubmit}
      onChange={(e) => go(e.currentTarget)}
      aria-label="Audit filters"
      data-testid="audit-filters"
    >
      <Select name="actor" label="Actor" value={values.actor} options={actors.map((a) => [a, a])} any="anyone" />
      <Select name="kind" label="Kind" value={values.kind} options={kinds} any="any kind" />
      <Select name="range" label="Time range" value={values.range} options={ranges} any="all time" />
      <Day name="from" label="From (UTC day)" value={values.from} />
      <Day name="to" label="To (UTC day)" value={values.to} />
      <noscript>
        <button type="submit">Apply</button>
      </noscript>
      {active ? (
        <Link href="/audit" className="clear-filters">
          Clear filters
        </Link>
      ) : null}
    </form>
  );
}
