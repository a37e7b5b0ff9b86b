import type { Metadata } from 'next';
import type { ReactNode } from 'react';
import { Nav } from '@/components/ui/nav';
import { QueryProvider } from '@/components/ui/query-provider';
import { dashboardContext } from '@/lib/server/context';
import './globals.css';

export const metadata: Metadata = { title: 'AQVEN', description: 'What happened when a model was called' };

export default function RootLayout({ children }: { children: ReactNode }) {
  const ctx = dashboardContext();
  return (
    <html lang="en">
      <body>
        <QueryProvider>
          <header className="topbar">
            <span className="brand">AQVEN</span>
            <span className="project" title={ctx.projectDir}>
              {ctx.projectName}
            </span>
            <Nav />
            {ctx.simulate ? (
              <span className="badge badge-sim" data-testid="sim-badge" title="Every provider is routed to the in-process simulator">
                simulated providers
              </span>
            ) : null}
          </header>
          <main className="page">{children}</main>
        </QueryProvider>
      </body>
    </html>
  );
}
