// The note contracts (lib/contracts/add-note.ts) at their one door, the run page's note actions: a
// note that is empty, over the size cap, or names an attempt without its node is refused with the
// contract's own words (E_BODY for the text, E_FORM for the rest) before anything is stored; an edit
// and a delete name their note alike. Notes per minute are the caller's limit (caller-limits.test.ts).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addNoteSchema, deleteNoteSchema, editNoteSchema, NOTE_MAX_CHARS } from '@/lib/contracts/add-note';
import { formData } from '../helpers/form-data';
import { simulatedDashboard } from '../helpers/simulated-dashboard';

const dashboard = simulatedDashboard();
const IDLE = { status: 'idle' } as const;
const words = (r: { success: boolean; error?: { issues: { message: string }[] } }) => r.error!.issues[0]!.message;

beforeAll(async () => {
  await dashboard.open();
}, 90_000);

afterAll(() => dashboard.close());

describe('notes: the contract’s refusal at the door', () => {
  it.each([
    ['an empty note', { runId: 'r1', body: '   ' }, 'E_BODY'],
    ['a note over the cap', { runId: 'r1', body: 'é'.repeat(NOTE_MAX_CHARS + 1) }, 'E_BODY'],
    ['an attempt without its node', { runId: 'r1', seq: '2', body: 'x' }, 'E_FORM'],
    ['an attempt number that is none', { runId: 'r1', nodeId: 'draft', seq: '0', body: 'x' }, 'E_FORM'],
    ['no run', { runId: '', body: 'x' }, 'E_FORM'],
  ])('add: %s', async (_what, values, code) => {
    const { addNoteAction } = await import('@/lib/actions/add-note');
    expect(await addNoteAction(IDLE, formData(values))).toEqual({ status: 'error', code, message: words(addNoteSchema.safeParse(values)) });
  });

  it('edit and delete: no note named, an empty text', async () => {
    const { editNoteAction } = await import('@/lib/actions/edit-note');
    const { deleteNoteAction } = await import('@/lib/actions/delete-note');
    expect(await editNoteAction(IDLE, formData({ noteId: '1', body: '' }))).toEqual({
      status: 'error',
      code: 'E_BODY',
      message: words(editNoteSchema.safeParse({ noteId: '1', body: '' })),
    });
    expect(await deleteNoteAction(IDLE, formData({ noteId: 'x' }))).toEqual({ status: 'error', code: 'E_FORM', message: words(deleteNoteSchema.safeParse({ noteId: 'x' })) });
  });
});
