import { FlowCard } from '@/components/flows/flow-card';
import { ProjectProblem } from '@/components/ui/project-problem';
import { pageSession } from '@/lib/server/page-session';
import { roleAllows } from '@/lib/shared/roles';

export const dynamic = 'force-dynamic';

export default async function FlowsPage() {
  const s = await pageSession();
  const flows = s.ok ? Object.values(s.session.project.flows).sort((a, b) => a.name.localeCompare(b.name)) : [];
  return (
    <section>
      <h1>Flows</h1>
      {!s.ok ? <ProjectProblem {...s} /> : null}
      {s.ok && flows.length === 0 ? <p className="empty">This project has no flows yet: add one under flows/.</p> : null}
      {flows.map((f) => (
        <FlowCard key={f.name} flow={f} canRun={s.ok && roleAllows(s.caller.role, 'editor')} />
      ))}
    </section>
  );
}
