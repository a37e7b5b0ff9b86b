import { agentStats } from '@/db/agent-queries';
import { AgentTable } from '@/components/agents/agent-table';
import { ProjectProblem } from '@/components/ui/project-problem';
import { pageSession } from '@/lib/server/page-session';
import '@/app/styles/agents.css';

export const dynamic = 'force-dynamic';

export default async function AgentsPage() {
  const s = await pageSession();
  if (!s.ok) {
    return (
      <section>
        <h1>Agents</h1>
        <ProjectProblem {...s} />
      </section>
    );
  }
  const { project, db } = s.session;
  const agents = Object.values(project.agents).sort((a, b) => a.name.localeCompare(b.name));
  const stats = Object.fromEntries((await agentStats(db)).map((x) => [x.agent, x]));
  return (
    <section>
      <h1>Agents</h1>
      <p className="muted">What every agent&apos;s calls ended in, across all runs of this project. Open an agent to change its policy.</p>
      {agents.length ? <AgentTable agents={agents} stats={stats} /> : <p className="empty">This project has no agents yet: add one under agents/.</p>}
    </section>
  );
}
