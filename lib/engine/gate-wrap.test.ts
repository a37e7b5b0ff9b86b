import { describe, expect, it } from 'vitest';
import { wrap, type GateStep, type Passage } from './rate-gate';

const passage = {} as Passage;

describe("the gate's steps put together (wrap)", () => {
  it('runs the steps in order and answers synchronously while none waits', () => {
    const seen: string[] = [];
    const step =
      (name: string): GateStep =>
      () => (seen.push(name), 'go');
    expect(wrap(step('pause'), step('probe'), step('slot'))(passage)).toBe('go');
    expect(seen).toEqual(['pause', 'probe', 'slot']);
  });

  it('the first step that does not say go answers, after a wait too; the later ones do not run', async () => {
    const seen: string[] = [];
    const refuse: GateStep = () => (seen.push('slot'), { limit: 'budget', waitingFor: 'slot' });
    const later: GateStep = () => (seen.push('later'), 'go');
    const waits: GateStep = () => (seen.push('pause'), Promise.resolve('go'));
    await expect(wrap(waits, refuse, later)(passage)).resolves.toEqual({ limit: 'budget', waitingFor: 'slot' });
    expect(wrap(() => 'again', later)(passage)).toBe('again');
    expect(seen).toEqual(['pause', 'slot']);
  });
});
