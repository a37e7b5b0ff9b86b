// Retry budget of one model for one node (DESIGN: Outcome policies, repair and budgets): one cell
// per answer it may give (`answerLimit`: retries + 1, computed by the engine), filled in the colour
// of each answer's outcome.
import { outcomeKey, type AttemptFacts } from '@/lib/dashboard/run-view';
import { splitModel } from '@/components/ui/format';

export function BudgetGauge({ model, answers, limit, attempts }: { model: string; answers: number; limit: number; attempts: AttemptFacts[] }) {
  const cells = Math.max(limit, answers);
  const m = splitModel(model);
  const spent = answers >= limit;
  return (
    <div
      className={`gauge${spent ? ' gauge-spent' : ''}`}
      data-testid="budget-gauge"
      data-model={model}
      data-answers={answers}
      data-limit={limit}
      title={`${model}: ${answers} of ${limit} answers used (retries + 1)`}
    >
      <span className="gauge-model mono">
        <span className="muted">{m.provider}:</span>
        {m.id}
      </span>
      <span className="gauge-cells" aria-hidden>
        {Array.from({ length: cells }, (_, i) => {
          const a = attempts[i];
          return <span key={i} className={`cell${a ? ` o-${outcomeKey(a)}` : ''}${i >= limit ? ' over' : ''}`} />;
        })}
      </span>
      <span className="gauge-count mono">
        {answers}/{limit}
      </span>
    </div>
  );
}
