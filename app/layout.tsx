import type { Metadata } from 'next';
import type { ReactNode } from 'react';
import { Nav } from '@/components/ui/nav';
import { QueryProvider } from '@/components/ui/query-provider';
import { HydrationMark } from '@/components/ui/hydration-mark';
import { UserMenu } from '@/components/auth/user-menu';
import { viewer } from '@/lib/server/access';
import { dashboardContext } from '@/lib/server/context';
import './globals.css';

export const metadata: Metadata = { title: 'AQVEN', description: 'What happened when a model was called' };

export default async function RootLayout({ children }: { children: ReactNode }) {
  const ctx = dashboardContext();
  // the menu only: every page checks its caller itself (a layout is not re-run on every navigation)
  const caller = await viewer();
  return (
    <html lang="en">
      <body>
        <QueryProvider>
          <header className="topbar">
            <span className="brand">AQVEN</span>
            <span className="project" title={caller ? ctx.projectDir : undefined}>
              {ctx.projectName}
            </span>
            {caller ? <Nav admin={caller.role === 'admin'} /> : null}
            {ctx.simulate ? (
              <span className="badge badge-sim" data-testid="sim-badge" title="Every provider is routed to the in-process simulator">
                simulated providers
              </span>
            ) : null}
            {caller?.kind === 'user' ? <UserMenu name={caller.name!} role={caller.role} /> : null}
          </header>
          <main className="page">{children}</main>
          <HydrationMark />
        </QueryProvider>
      </body>
    </html>
  );
}
