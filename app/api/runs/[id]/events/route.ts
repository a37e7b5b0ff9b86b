// A run's events as Server-Sent Events, until the run ends (DESIGN: "A run's events";
// lib/server/run-events-sse.ts).
import { runEventsRoute } from '@/lib/server/run-events-sse';

export const dynamic = 'force-dynamic';

export async function GET(req: Request, { params }: { params: Promise<{ id: string }> }) {
  return runEventsRoute(req, params);
}
