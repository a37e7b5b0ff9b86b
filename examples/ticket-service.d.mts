// The example service's one export, typed for the test that runs it (test/api/client.test.ts).
import type { Server } from 'node:http';

export function ticketService(o: { aqvenUrl: string; token?: string; wait?: number }): Server;
