import { NextResponse } from 'next/server';
import { getRunRecord } from '@/lib/flow/stored-run';
import { serverSession } from '@/lib/server/session';

export const dynamic = 'force-dynamic';

export async function GET(_req: Request, { params }: { params: Promise<{ id: string }> }) {
  const { id } = await params;
  const { db } = await serverSession();
  const record = await getRunRecord(db, id);
  if (!record) return NextResponse.json({ error: `no run with id ${id}` }, { status: 404 });
  return NextResponse.json(record);
}
