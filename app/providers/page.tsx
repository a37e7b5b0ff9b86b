import { latestModelLimits } from '@/db/limits-queries';
import { activePauses } from '@/db/pause-queries';
import { LimitsSection } from '@/components/limits/limits-section';
import { ProviderCard, type ProviderView } from '@/components/providers/provider-card';
import { RateLimitPauses, type PauseView } from '@/components/providers/rate-limit-pauses';
import { ProjectProblem } from '@/components/ui/project-problem';
import { parseModelString } from '@/lib/engine/model-string';
import { pageSession } from '@/lib/server/page-session';
import { durationText, providerDurations, writtenDurations } from '@/lib/server/provider-durations';
import { limitsResponse, probeDefaults } from '@/lib/server/limits-probe';
import { roleAllows } from '@/lib/shared/roles';

export const dynamic = 'force-dynamic';

export default async function ProvidersPage() {
  const s = await pageSession();
  if (!s.ok) {
    return (
      <section>
        <h1>Providers</h1>
        <ProjectProblem {...s} />
      </section>
    );
  }
  const { project, providers, simulated, db } = s.session;
  const usedBy = new Map<string, string[]>();
  for (const a of Object.values(project.agents)) {
    for (const m of [a.model, ...a.fallbackModels]) {
      const p = parseModelString(m)?.provider;
      if (!p) continue;
      const list = usedBy.get(p) ?? [];
      if (!list.includes(a.name)) list.push(a.name);
      usedBy.set(p, list);
    }
  }
  // only whether the variable is set, from the real environment: never its value
  const written = await writtenDurations(project);
  const keySet = (name: string | undefined) => !!name && Object.hasOwn(process.env, name) && !!process.env[name];
  const views: ProviderView[] = Object.values(project.providers)
    .map((p) => ({
      provider: p,
      simulatedUrl: simulated ? (providers[p.name]?.baseUrl ?? null) : null,
      keyState: (!p.apiKeyEnv ? 'not needed' : keySet(p.apiKeyEnv) ? 'present' : 'missing') as ProviderView['keyState'],
      usedBy: usedBy.get(p.name) ?? [],
      durations: providerDurations(written.get(p.name), p),
    }))
    // providers in use first: the built-in ones nobody calls are reference only
    .sort((a, b) => Number(b.usedBy.length > 0) - Number(a.usedBy.length > 0) || a.provider.name.localeCompare(b.provider.name));
  const now = Date.now();
  const pauses: PauseView[] = (await activePauses(db, now)).map((p) => {
    const ref = parseModelString(p.model);
    const provider = ref?.provider ?? '';
    const maxWaitText = p.origin ? durationText(written.get(provider), 'on_rate_limit.max_wait', p.origin.maxWaitMs).text : null;
    return { ...p, provider, providerKnown: Object.hasOwn(project.providers, provider), modelId: ref?.modelId ?? p.model, leftMs: p.pausedUntil - now, maxWaitText };
  });
  // the models the agents call, then any other model measured in this database
  const agentModels = [...new Set(Object.values(project.agents).flatMap((a) => [a.model, ...a.fallbackModels]))];
  const limitModels = [...new Set([...agentModels, ...(await latestModelLimits(db)).map((m) => m.model)])];
  const limits = await limitsResponse(db, limitModels);
  return (
    <section>
      <h1>Providers</h1>
      {simulated ? (
        <p className="note">
          Providers are <strong>simulated</strong>: every call goes to the in-process simulator playing this project&apos;s chaos profile (seed {project.simulate.seed}); no key is
          needed and nothing leaves this machine.
        </p>
      ) : null}
      <section className="panel pauses-panel" aria-labelledby="pauses-title" data-testid="rate-limit-pauses">
        <h2 id="pauses-title">Rate-limit pauses</h2>
        <p className="muted small">
          A 429 pauses every call of its model, in every run and process, until the wait it asked for is over — never longer than the provider&apos;s on_rate_limit.max_wait.
          Clearing a pause lets the calls go now; the next one goes first, as a probe.
        </p>
        <RateLimitPauses pauses={pauses} canClear={roleAllows(s.caller.role, 'editor')} />
      </section>
      <LimitsSection
        models={limitModels.map((model) => ({ model, role: null }))}
        initial={limits}
        canStart={roleAllows(s.caller.role, 'editor')}
        defaults={probeDefaults()}
        intro="Per model: the nesting depth, list length and enum size where it stops getting a shape right on the first try, as aqven limits measured it (models the agents call first)."
      />
      {views.map((v) => (
        <ProviderCard key={v.provider.name} view={v} />
      ))}
    </section>
  );
}
