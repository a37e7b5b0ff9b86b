// The run page's address and anchors (the id a node's or an attempt's element carries, and the URL
// hash that opens the page on it): one home for making and reading them.

export function nodeAnchor(nodeId: string): string {
  return `node-${nodeId}`;
}

export function attemptAnchor(nodeId: string, seq: number): string {
  return `attempt-${nodeId}-${seq}`;
}

/** The run page of `runId`, opened on a node, or on one of its attempts when `seq` is given. */
export function runHref(runId: string, at?: { node: string; seq?: number | null }): string {
  const page = `/runs/${encodeURIComponent(runId)}`;
  if (!at) return page;
  return `${page}#${encodeURIComponent(at.seq != null ? attemptAnchor(at.node, at.seq) : nodeAnchor(at.node))}`;
}

/** The replay preview of node `node` of run `runId` (DESIGN: The dashboard, "Replay with the current policy"). */
export function replayHref(runId: string, node: string): string {
  return `/runs/${encodeURIComponent(runId)}/replay?node=${encodeURIComponent(node)}`;
}

/**
 * What a URL hash (with or without its "#", percent-encoded or not) points at on the run page: a
 * node, or an attempt of a node; null for anything else. Node ids hold no "#" or space (the
 * project's loader allows letters, digits, "_" and "-"), and a seq is the digits after the last "-".
 */
export function readRunAnchor(hash: string): { anchor: string; nodeId: string; seq: number | null } | null {
  let anchor = hash.startsWith('#') ? hash.slice(1) : hash;
  try {
    anchor = decodeURIComponent(anchor);
  } catch {
    return null;
  }
  const attempt = /^attempt-(.+)-(\d+)$/.exec(anchor);
  if (attempt) return { anchor, nodeId: attempt[1]!, seq: Number(attempt[2]) };
  const node = /^node-(.+)$/.exec(anchor);
  // node-body-<id> is the id of a node's body, not a link target of its own
  if (node && !node[1]!.startsWith('body-')) return { anchor, nodeId: node[1]!, seq: null };
  return null;
}
