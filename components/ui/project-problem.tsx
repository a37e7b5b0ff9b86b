import type { Diagnostic } from '@/lib/project/diagnostics';

/** What a page shows when the project does not load: the `aqven check` diagnostics to fix. */
export function ProjectProblem({ projectDir, message, diagnostics }: { projectDir: string; message: string; diagnostics: Diagnostic[] }) {
  return (
    <section className="panel problem" role="alert">
      <h2>The project does not load</h2>
      <p>
        {message} <span className="muted mono">({projectDir})</span>
      </p>
      {diagnostics.length ? (
        <ul className="diagnostics mono">
          {diagnostics.map((d, i) => (
            <li key={i}>
              <span className={d.severity === 'error' ? 'error-text' : 'muted'}>
                {d.file}:{d.line}:{d.col}: {d.severity} {d.code}
              </span>{' '}
              {d.message}
              <div className="muted">hint: {d.hint}</div>
            </li>
          ))}
        </ul>
      ) : null}
    </section>
  );
}
