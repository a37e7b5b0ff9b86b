export const dynamic = 'force-dynamic';

export default function FlowsPage() {
  return (
    <section>
      <h1>Flows</h1>
      <p className="muted">Nothing here yet.</p>
    </section>
  );
}
