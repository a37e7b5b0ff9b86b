'use client';
// /failures' window and agent: links and a GET form, so every view is a URL; with scripts the
// agent select navigates on change.
import Link from 'next/link';
import { useRouter } from 'next/navigation';
import { FAILURE_WINDOW_LABELS, FAILURE_WINDOWS, type FailureWindow } from '@/lib/dashboard/failure-groups';

const href = (w: FailureWindow, agent: string) => {
  const q = new URLSearchParams({ window: w });
  if (agent) q.set('agent', agent);
  return `/failures?${q}`;
};

export function FailureFilters({ current, agent, agents }: { current: FailureWindow; agent: string; agents: string[] }) {
  const router = useRouter();
  const choices = agent && !agents.includes(agent) ? [...agents, agent] : agents;
  return (
    <div className="fg-filters">
      <nav className="fg-windows" aria-label="Window">
        {(Object.keys(FAILURE_WINDOWS) as FailureWindow[]).map((w) => (
          <Link key={w} href={href(w, agent)} aria-current={w === current ? 'page' : undefined}>
            {FAILURE_WINDOW_LABELS[w]}
          </Link>
        ))}
      </nav>
      <form
        method="get"
        action="/failures"
        aria-label="Failure filters"
        onSubmit={(e) => {
          e.preventDefault();
          router.push(href(current, String(new FormData(e.currentTarget).get('agent') ?? '')));
        }}
        onChange={(e) => router.push(href(current, String(new FormData(e.currentTarget).get('agent') ?? '')))}
      >
        <input type="hidden" name="window" value={current} />
        <label>
          Agent
          <select name="agent" defaultValue={agent} key={agent}>
            <option value="">every agent</option>
            {choices.map((a) => (
              <option key={a} value={a}>
                {a}
              </option>
            ))}
          </select>
        </label>
        <noscript>
          <button type="submit">Apply</button>
        </noscript>
      </form>
    </div>
  );
}
