'use client';
import Link from 'next/link';
import { usePathname } from 'next/navigation';

const LINKS = [
  { href: '/runs', label: 'Runs' },
  { href: '/flows', label: 'Flows' },
  { href: '/agents', label: 'Agents' },
  { href: '/providers', label: 'Providers' },
];

export function Nav() {
  const path = usePathname() ?? '';
  return (
    <nav className="nav" aria-label="Main">
      {LINKS.map((l) => (
        <Link key={l.href} href={l.href} aria-current={path.startsWith(l.href) ? 'page' : undefined}>
          {l.label}
        </Link>
      ))}
    </nav>
  );
}
