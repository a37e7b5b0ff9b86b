'use client';
// "Replay with the current policy" on a failed node of the run page, for editors: to the preview
// page, which shows the prompt diff and the estimate before anything runs.
import Link from 'next/link';
import { replayHref } from '@/lib/dashboard/run-anchors';
import { useReplayAccess } from './replay-access';

export function ReplayNodeLink({ nodeId, status }: { nodeId: string; status: string }) {
  const access = useReplayAccess();
  if (!access || status !== 'failed') return null;
  return (
    <Link href={replayHref(access.runId, nodeId)} className="replay-link" data-testid="replay-node-link">
      Replay with the current policy →
    </Link>
  );
}
