import Link from 'next/link';

export default function AgentNotFound() {
  return (
    <section>
      <h1>Agent not found</h1>
      <p className="muted">
        The project has no agent by this name. <Link href="/agents">All agents</Link>
      </p>
    </section>
  );
}
