import { NextResponse } from 'next/server';
import { getRunRecord } from '@/lib/flow/stored-run';
import { routeCaller } from '@/lib/server/access';
import { serverSession } from '@/lib/server/session';

export const dynamic = 'force-dynamic';

export async function GET(req: Request, { params }: { params: Promise<{ id: string }> }) {
  const caller = await routeCaller(req, 'viewer');
  if (caller instanceof Response) return caller;
  const { id } = await params;
  const { db } = await serverSession();
  const record = await getRunRecord(db, id);
  if (!record) return NextResponse.json({ error: `no run with id ${id}` }, { status: 404 });
  return NextResponse.json(record);
}
