import Link from 'next/link';

export default function DocNotFound() {
  return (
    <section>
      <h1>No such page</h1>
      <p className="muted">
        The docs have no page of that name. <Link href="/docs">All docs</Link>
      </p>
    </section>
  );
}
