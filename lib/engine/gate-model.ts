// The rate gate's state of one model string: its pause, the probe after it and its slots, each a
// policy of its own (gate-pause.ts, gate-probe.ts, gate-slots.ts), and how many calls wait.
import { PausePolicy } from './gate-pause';
import { ProbePolicy } from './gate-probe';
import { SlotPolicy } from './gate-slots';
import type { PauseOrigin } from './types';

export class ModelGate {
  readonly pause = new PausePolicy();
  readonly probe = new ProbePolicy();
  readonly slots = new SlotPolicy();
  /** calls at the gate, waiting or about to go */
  waiting = 0;

  /** A 429 (or another process) paused the model: the next call after the pause is a probe. */
  paused(until: number, reason: string, origin?: PauseOrigin, sentAt?: number): boolean {
    this.probe.trip();
    return this.pause.extend(until, reason, origin, sentAt);
  }
}
