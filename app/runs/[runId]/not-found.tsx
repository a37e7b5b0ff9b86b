import Link from 'next/link';

export default function RunNotFound() {
  return (
    <section>
      <h1>Run not found</h1>
      <p className="muted">
        No run with this id in this project&apos;s database. <Link href="/runs">Back to the runs</Link>
      </p>
    </section>
  );
}
