export const dynamic = 'force-dynamic';

export default function ProvidersPage() {
  return (
    <section>
      <h1>Providers</h1>
      <p className="muted">Nothing here yet.</p>
    </section>
  );
}
