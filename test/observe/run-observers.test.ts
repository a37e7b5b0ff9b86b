// The one seam observability hangs on (lib/flow/run-observers.ts): every run tells every observer
// of the process its facts in order, an observer's mistake never touches the run, and a removed
// observer hears nothing more.
import { afterEach, describe, expect, it } from 'vitest';
import { addRunObserver, type ObservedRun } from '@/lib/flow/run-observers';
import type { ProgressEvent } from '@/lib/flow/run-options';
import { FLASH_LITE, GPT_OSS, world, type World } from '../helpers/showcase';

let w: World | null = null;
const removals: (() => void)[] = [];
afterEach(async () => {
  for (const remove of removals.splice(0)) remove();
  await w?.close();
  w = null;
});

const ticket = { ticket: 'I was charged twice for my subscription this month.' };

describe('run observers', () => {
  it('hear every run of the process in order, from run_start to run_end; a throwing observer changes nothing', async () => {
    const seen: { run: ObservedRun; events: ProgressEvent[] }[] = [];
    removals.push(
      addRunObserver({
        watch(run) {
          const events: ProgressEvent[] = [];
          seen.push({ run, events });
          return { event: (e) => events.push(e) };
        },
      }),
      addRunObserver({
        watch: () => ({
          event() {
            throw new Error('an observer that breaks');
          },
        }),
      }),
      addRunObserver({
        watch() {
          throw new Error('an observer that breaks at once');
        },
      }),
    );
    w = await world({ [FLASH_LITE]: [{ kind: 'provider_error', variant: 'finish_error', native_finish_reason: 'MALFORMED_FUNCTION_CALL' }], [GPT_OSS]: [{ kind: 'ok' }] });
    const rec = await w.run('triage', ticket);
    expect(rec.status).toBe('succeeded');
    expect(seen).toHaveLength(1);
    const [{ run, events }] = seen as [(typeof seen)[0]];
    expect(run).toMatchObject({ runId: rec.id, flow: 'triage', kind: 'flow', resumed: false });
    // where its facts are committed, and the project it runs under: what an observer reads after run_end
    expect(run.db).toBe(w.db);
    expect(run.config).toBe(w.project);
    expect(events[0]).toEqual({ type: 'run_start', runId: rec.id, flow: 'triage' });
    expect(events.at(-1)).toMatchObject({ type: 'run_end', record: { id: rec.id, status: 'succeeded' } });
    const classify = events.flatMap((e) => (e.type === 'engine' && e.node === 'classify' ? [e.event.type] : []));
    // the first model's answer ends in error and falls back; the second answers
    expect(classify.filter((t) => t === 'attempt_end')).toHaveLength(2);
    expect(classify.filter((t) => t === 'try_start').length).toBeGreaterThanOrEqual(2);
  });

  it('a removed observer hears nothing of the next run', async () => {
    let runs = 0;
    const remove = addRunObserver({ watch: () => (runs++, null) });
    w = await world({ [FLASH_LITE]: [{ kind: 'ok' }], [GPT_OSS]: [{ kind: 'ok' }] });
    await w.run('triage', ticket);
    remove();
    await w.run('triage', ticket);
    expect(runs).toBe(1);
  });
});
