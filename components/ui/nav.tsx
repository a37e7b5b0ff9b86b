'use client';
import Link from 'next/link';
import { usePathname } from 'next/navigation';
import { SearchBox } from '@/components/search/search-box';

const LINKS = [
  { href: '/runs', label: 'Runs' },
  { href: '/failures', label: 'Failures' },
  { href: '/flows', label: 'Flows' },
  { href: '/agents', label: 'Agents' },
  { href: '/providers', label: 'Providers' },
  { href: '/docs', label: 'Docs' },
];

/** the audit trail: admins only (DESIGN: The dashboard, "Audit trail") */
const AUDIT_LINK = { href: '/audit', label: 'Audit' };

export function Nav({ admin = false }: { admin?: boolean }) {
  const path = usePathname() ?? '';
  const nav = (
    <nav className="nav" aria-label="Main">
      {(admin ? [...LINKS, AUDIT_LINK] : LINKS).map((l) => (
        <Link key={l.href} href={l.href} aria-current={path.startsWith(l.href) ? 'page' : undefined}>
          {l.label}
        </Link>
      ))}
    </nav>
  );
  // the search box stands beside the nav in the top bar (a row of its own on a phone)
  return (
    <>
      {nav}
      <SearchBox />
    </>
  );
}
