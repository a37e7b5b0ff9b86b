export const dynamic = 'force-dynamic';

export default function AgentsPage() {
  return (
    <section>
      <h1>Agents</h1>
      <p className="muted">Nothing here yet.</p>
    </section>
  );
}
