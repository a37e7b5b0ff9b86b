// Subscribes to the engine's facts and writes them as they happen (DESIGN: Storage): an attempt row
// exists from its first byte, streamed text lands in batches while streaming — only what the
// engine gives as `stored` (redacted: DESIGN: Streaming), never a delta's raw text — and the finished
// attempt is committed before the engine is told to go on (the handler is awaited). When the run
// is stopped (a signal, a lost lease, a storage failure) the attempts still in flight are closed
// as interrupted, with what is known of them (interrupt()).
import type { RunStore } from '@/db/run-store';
import type { AttemptFacts } from '@/db/types';
import type { EngineEvent, TryRecord, UsageTotals } from '@/lib/engine/types';
import { cutOffTry } from '@/lib/engine/cut-off-try';
import { ZERO_USAGE } from '@/lib/engine/usage';
import { capFailureText } from '@/lib/redact';
import { newRecordId } from '@/lib/shared/record-id';

const FLUSH_CHARS = 2048;
const FLUSH_MS = 200;

interface Pending {
  id: string;
  start: Extract<EngineEvent, { type: 'attempt_start' }>;
  request: unknown;
  tryNo: number;
  buffer: string;
  lastFlush: number;
  /** the current try's stored (redacted) text so far, and the tries already over: what an interruption keeps */
  text: string;
  tries: TryRecord[];
  /** what the engine reported of the attempt when the run's signal cut it off (attempt_interrupted) */
  cut: { usage: UsageTotals; usageUnknown: boolean } | null;
  /** the try sent and not yet over (write-ahead: try_start committed it), and when */
  sending: { tryNo: number; at: number; generationId?: string } | null;
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
        const p: Pending = { id: newRecordId(), start: e, request: e.request, tryNo: 1, buffer: '', lastFlush: this.now(), text: '', tries: [], cut: null, sending: null };
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
          p.text = '';
          this.store.resetStreamed(p.id);
        }
        p.buffer += e.stored;
        p.text += e.stored;
        if (p.buffer.length >= FLUSH_CHARS || this.now() - p.lastFlush >= FLUSH_MS) this.flush(p);
        return;
      }
      case 'try_start': {
        // write-ahead: the engine sends the try once this is committed
        const p = this.attempts.get(e.seq);
        if (!p) return;
        p.sending = { tryNo: e.tryNo, at: e.at };
        return this.store.sendTry(p.id, e.tryNo, e.at);
      }
      case 'try_generation': {
        const p = this.attempts.get(e.seq);
        if (!p?.sending || p.sending.tryNo !== e.tryNo) return;
        p.sending.generationId = e.generationId;
        this.store.noteGeneration(p.id, e.generationId);
        return;
      }
      case 'try_end': {
        const p = this.attempts.get(e.seq);
        if (!p) return;
        p.sending = null;
        p.tries.push(e.try);
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
      case 'attempt_interrupted': {
        // kept for interrupt(), which the run calls once the engine has thrown
        const p = this.attempts.get(e.seq);
        if (p) p.cut = { usage: e.usage, usageUnknown: e.usageUnknown };
        return;
      }
      case 'rate_limit_pause':
        // written by the SharedPauses store the gate calls; nothing more to record here
        return;
    }
  };

  /**
   * Closes every attempt still in flight as interrupted (`message` says why): no outcome,
   * discarded, the streamed text that was stored (redacted; the tail the engine held back is never
   * stored from deltas), capped, and its finished tries. Its usage is what the engine reported when
   * the signal cut it off (attempt_interrupted): the provider's tokens so far, priced; usage unknown
   * when the cut-off try had reported none. An attempt the engine has not reported on yet (a process
   * closing its runs synchronously at exit) is recorded with usage 0, unknown. Returns the attempts
   * as facts, and the commit.
   */
  interrupt(message: string): { attempts: AttemptFacts[]; written: Promise<void> } {
    const finishedAt = this.now();
    const attempts: AttemptFacts[] = [];
    const writes: Promise<void>[] = [];
    for (const p of this.attempts.values()) {
      const streamedText = p.text ? capFailureText(p.text) : null;
      const { seq, model, chainIndex, answerNo, request, startedAt } = p.start;
      const { usage, usageUnknown } = p.cut ?? { usage: { ...ZERO_USAGE }, usageUnknown: true };
      const cutTry = p.sending ? cutOffTry(p.sending, finishedAt) : undefined;
      const tries = cutTry ? [...p.tries, cutTry] : p.tries;
      attempts.push({
        seq,
        model,
        chainIndex,
        answerNo,
        outcome: null,
        finishReason: null,
        cause: null,
        action: 'none',
        request,
        responseText: null,
        error: { kind: 'transport', message, detail: null },
        validationErrors: [],
        discarded: true,
        streamedText,
        usage,
        usageUnknown,
        startedAt,
        finishedAt,
        tries,
      });
      writes.push(this.store.interruptAttempt(p.id, { message, streamedText, usage, usageUnknown, finishedAt, cutTry }));
    }
    this.attempts.clear();
    return { attempts, written: Promise.all(writes).then(() => undefined) };
  }
}
