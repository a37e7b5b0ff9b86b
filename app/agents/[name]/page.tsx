import Link from 'next/link';
import { notFound } from 'next/navigation';
import { agentModelStats, agentStats, recentAgentFailures } from '@/db/agent-queries';
import { agentTimeline } from '@/db/agent-timeline';
import { listPolicyRevisions } from '@/db/policy-queries';
import { AgentPolicyForm } from '@/components/agents/agent-policy-form';
import { AgentStatsPanel } from '@/components/agents/agent-stats-panel';
import { AgentTimelineCharts } from '@/components/agents/agent-timeline-chart';
import { LimitsSection } from '@/components/limits/limits-section';
import { RevisionHistory } from '@/components/agents/revision-history';
import { ProjectProblem } from '@/components/ui/project-problem';
import { timelineView } from '@/lib/dashboard/agent-timeline';
import { parseAgentYaml } from '@/lib/project';
import { pageSession } from '@/lib/server/page-session';
import { roleAllows } from '@/lib/shared/roles';
import { readAgentFile } from '@/lib/server/agent-file';
import { agentLimitWarnings, limitsResponse, probeDefaults } from '@/lib/server/limits-probe';
import { own } from '@/lib/shared/own';
import '@/app/styles/what-if.css';
import '@/app/styles/agents.css';

export const dynamic = 'force-dynamic';

/** the charts' window: UTC days, as the daily sums keep them */
const CHART_DAYS = 30;

export default async function AgentPage({ params }: { params: Promise<{ name: string }> }) {
  const { name: raw } = await params;
  const name = decodeURIComponent(raw);
  const s = await pageSession();
  if (!s.ok) return <ProjectProblem {...s} />;
  const { project, db } = s.session;
  const agent = own(project.agents, name); // never a member of Object.prototype ("constructor")
  if (!agent) notFound();
  const file = await readAgentFile(project, name);
  // the form edits the file as it is on disk now, even if it was edited by hand since start-up
  const current = (file && parseAgentYaml(file.text, file.file).agent) || agent;
  // every model of the project's catalogues, for the model inputs' suggestions
  const models = Object.values(project.providers).flatMap((p) => Object.keys(p.models).map((id) => `${p.name}:${id}`));
  const [revisions, [stats], modelStats, failures, timeline] = await Promise.all([
    listPolicyRevisions(db, agent.name),
    agentStats(db, { agent: agent.name }),
    agentModelStats(db, agent.name),
    recentAgentFailures(db, agent.name),
    agentTimeline(db, agent.name, { now: Date.now(), days: CHART_DAYS }),
  ]);
  const chain = [agent.model, ...agent.fallbackModels];
  const [limits, limitWarnings] = await Promise.all([limitsResponse(db, chain), agentLimitWarnings(db, project, agent.name)]);
  return (
    <section>
      <nav className="crumbs">
        <Link href="/agents">← Agents</Link>
      </nav>
      <div className="page-head">
        <h1>
          Agent <span className="mono">{agent.name}</span>
        </h1>
        <span className="mono muted">{agent.file}</span>
        <Link href={`/runs?agent=${encodeURIComponent(agent.name)}`} className="push-right">
          Runs with {agent.name} →
        </Link>
      </div>
      {agent.description ? <p className="description">{agent.description}</p> : null}
      <div className="agent-layout">
        <div className="agent-policy">
          <h2>Policy</h2>
          <AgentPolicyForm
            agent={agent.name}
            file={agent.file}
            base={file?.hash ?? ''}
            models={models}
            readOnly={!roleAllows(s.caller.role, 'editor')}
            initial={{
              model: current.model,
              fallback_models: current.fallbackModels,
              retries: current.output.retries,
              on_error: current.output.onError,
              on_refusal: current.output.onRefusal,
              on_truncated: current.output.onTruncated,
              strict: current.output.strict,
            }}
          />
          <LimitsSection
            models={chain.map((model, i) => ({ model, role: i === 0 ? 'model' : 'fallback' }))}
            initial={limits}
            canStart={roleAllows(s.caller.role, 'editor')}
            defaults={probeDefaults()}
            warnings={limitWarnings}
            intro="Where each model of this agent's chain stops getting a shape right on the first try, as aqven limits measured it. The repair retry can fix a wrong shape once; past these figures, expect repairs and failures."
          />
        </div>
        <div className="agent-side">
          <AgentTimelineCharts view={timelineView(timeline)} days={CHART_DAYS} />
          <AgentStatsPanel stats={stats ?? null} models={modelStats} failures={failures} />
        </div>
        <div className="agent-revisions">
          <h2>Revisions</h2>
          <RevisionHistory revisions={revisions} />
        </div>
      </div>
    </section>
  );
}
