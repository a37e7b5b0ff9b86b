'use client';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { useState, type ReactNode } from 'react';
import { z } from 'zod';

// zod's first parse probes `new Function` (its JIT): the CSP forbids eval, so the browser would
// report a violation; jitless parsing is just as correct (DESIGN: Request checks).
z.config({ jitless: true });

export function QueryProvider({ children }: { children: ReactNode }) {
  const [client] = useState(() => new QueryClient({ defaultOptions: { queries: { staleTime: 1000, refetchOnWindowFocus: false } } }));
  return <QueryClientProvider client={client}>{children}</QueryClientProvider>;
}
