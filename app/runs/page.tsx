export const dynamic = 'force-dynamic';

export default function RunsPage() {
  return (
    <section>
      <h1>Runs</h1>
      <p className="muted">Nothing here yet.</p>
    </section>
  );
}
