// The HTTP API's reference (/docs/api): each route of the OpenAPI document the API serves — method,
// path, who may call it, parameters, request body and answers — and its named schemas.
import type { ApiReference, SchemaView } from '@/lib/dashboard/api-reference';
import { schemaAnchor } from '@/lib/dashboard/api-reference';

function Schema({ view }: { view: SchemaView | null }) {
  if (!view) return <span className="muted">none</span>;
  if ('ref' in view)
    return (
      <a href={`#${schemaAnchor(view.ref)}`} className="mono">
        {view.ref}
      </a>
    );
  return (
    <details className="api-schema">
      <summary>JSON Schema</summary>
      <pre>{view.json}</pre>
    </details>
  );
}

export function ApiReferenceView({ api }: { api: ApiReference }) {
  return (
    <>
      <nav className="doc-toc" aria-label="Routes">
        <p className="doc-toc-title">Routes</p>
        <ul>
          {api.operations.map((op) => (
            <li key={op.id}>
              <a href={`#${op.id}`} className="mono">
                {op.method} {op.path}
              </a>
            </li>
          ))}
        </ul>
      </nav>
      <p>{api.description}</p>
      {api.operations.map((op) => (
        <section key={op.id} className="api-op" data-testid="api-route" data-route={`${op.method} ${op.path}`}>
          <h3 id={op.id}>
            <span className="api-method">{op.method}</span> {op.path}
          </h3>
          <p>{op.summary}</p>
          <p className="small">
            <strong>Who may call it:</strong> {op.access}
          </p>
          {op.params.length ? (
            <div className="doc-table">
              <table>
                <thead>
                  <tr>
                    <th>parameter</th>
                    <th>in</th>
                    <th>type</th>
                    <th>description</th>
                  </tr>
                </thead>
                <tbody>
                  {op.params.map((p) => (
                    <tr key={`${p.in}:${p.name}`}>
                      <td className="mono">
                        {p.name}
                        {p.required ? ' (required)' : ''}
                      </td>
                      <td>{p.in}</td>
                      <td className="mono">{p.type}</td>
                      <td>{p.description}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          ) : null}
          {op.body ? (
            <p>
              <strong>Request body</strong> (application/json): <Schema view={op.body} />
            </p>
          ) : null}
          <div className="doc-table">
            <table>
              <thead>
                <tr>
                  <th>status</th>
                  <th>answer</th>
                  <th>body</th>
                </tr>
              </thead>
              <tbody>
                {op.responses.map((r) => (
                  <tr key={r.status}>
                    <td className="mono">{r.status}</td>
                    <td>
                      {r.description}
                      {r.headers.length ? (
                        <ul className="small">
                          {r.headers.map((h) => (
                            <li key={h.name}>
                              <code>{h.name}</code>: {h.description}
                            </li>
                          ))}
                        </ul>
                      ) : null}
                    </td>
                    <td>
                      {r.content.length
                        ? r.content.map((c) => (
                            <div key={c.mediaType}>
                              <span className="mono small">{c.mediaType}</span> <Schema view={c.schema} />
                            </div>
                          ))
                        : null}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </section>
      ))}
      <h2 id="schemas">Schemas</h2>
      {api.components.map((c) => (
        <details key={c.name} id={schemaAnchor(c.name)} className="api-schema">
          <summary className="mono">{c.name}</summary>
          <pre>{c.json}</pre>
        </details>
      ))}
    </>
  );
}
