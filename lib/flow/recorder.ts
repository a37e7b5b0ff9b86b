// Subscribes to the engine's facts and writes them as they happen (DESIGN: Storage): an attempt row
// exists from its first byte, streamed text lands in batches while streaming, and the finished
// attempt is committed before the engine is told to go on (the handler is awaited).
import { randomUUID } from 'node:crypto';
import type { RunStore } from '@/db/run-store';
import type { EngineEvent } from '@/lib/engine/types';

const FLUSH_CHARS = 2048;
const FLUSH_MS = 200;

interface Pending {
  id: string;
  request: unknown;
  tryNo: number;
  buffer: string;
  lastFlush: number;
}

export class NodeRecorder {
  private readonly attempts = new Map<number, Pending>();

  constructor(
    private readonly store: RunStore,
    private readonly runId: string,
    readonly nodeRunId: string,
    private readonly now: () => number = Date.now,
  ) {}

  private flush(p: Pending): void {
    if (!p.buffer) return;
    this.store.appendStreamed(p.id, p.buffer);
    p.buffer = '';
    p.lastFlush = this.now();
  }

  /** returns a promise for the facts the engine must wait for (a finished attempt) */
  readonly onEvent = (e: EngineEvent): void | Promise<void> => {
    switch (e.type) {
      case 'attempt_start': {
        const p: Pending = { id: randomUUID(), request: e.request, tryNo: 1, buffer: '', lastFlush: this.now() };
        this.attempts.set(e.seq, p);
        this.store.startAttempt({
          id: p.id,
          nodeRunId: this.nodeRunId,
          runId: this.runId,
          seq: e.seq,
          model: e.model,
          chainIndex: e.chainIndex,
          answerNo: e.answerNo,
          request: e.request,
          startedAt: e.startedAt,
        });
        return;
      }
      case 'delta': {
        const p = this.attempts.get(e.seq);
        if (!p) return;
        if (e.tryNo !== p.tryNo) {
          // the previous try's stream broke; its text is stored on that try (discarded_text)
          p.tryNo = e.tryNo;
          p.buffer = '';
          this.store.resetStreamed(p.id);
        }
        p.buffer += e.text;
        if (p.buffer.length >= FLUSH_CHARS || this.now() - p.lastFlush >= FLUSH_MS) this.flush(p);
        return;
      }
      case 'try_end': {
        const p = this.attempts.get(e.seq);
        if (!p) return;
        this.store.insertTry(p.id, e.try);
        return;
      }
      case 'attempt_end': {
        const p = this.attempts.get(e.attempt.seq);
        if (!p) return;
        // the final text replaces the batches (redacted by the engine when the attempt was dropped)
        p.buffer = '';
        this.attempts.delete(e.attempt.seq);
        return this.store.finishAttempt(p.id, e.attempt, e.attempt.request !== p.request);
      }
      case 'rate_limit_pause':
        // written by the SharedPauses store the gate calls; nothing more to record here
        return;
    }
  };
}
