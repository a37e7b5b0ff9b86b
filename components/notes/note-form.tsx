'use client';
// The note form: a new note on a run, a node or an attempt, or a note's new text. The server action
// checks the caller, the size and (on an edit) that the caller wrote the note; a success re-reads
// the page's notes. Ctrl/⌘+Enter saves.
import { useActionState, useEffect, useRef, useState } from 'react';
import { addNoteAction } from '@/lib/actions/add-note';
import { editNoteAction } from '@/lib/actions/edit-note';
import { NOTE_MAX_CHARS, noteLength } from '@/lib/contracts/add-note';
import type { NoteFormState } from '@/lib/forms/notes';
import { useNotes } from './notes-context';

const IDLE: NoteFormState = { status: 'idle' };

type Target = { kind: 'add'; nodeId: string | null; seq: number | null } | { kind: 'edit'; noteId: number; body: string };

export function NoteError({ state }: { state: NoteFormState }) {
  if (state.status !== 'error') return null;
  return (
    <p className="field-error" data-testid="note-error" data-code={state.code} role="alert">
      <span className="code">{state.code}</span>
      {state.message}
    </p>
  );
}

export function NoteForm({ target, onDone, label }: { target: Target; onDone: () => void; label: string }) {
  const ctx = useNotes();
  const [state, formAction, pending] = useActionState(target.kind === 'add' ? addNoteAction : editNoteAction, IDLE);
  const [body, setBody] = useState(target.kind === 'edit' ? target.body : '');
  const form = useRef<HTMLFormElement>(null);
  const area = useRef<HTMLTextAreaElement>(null);
  const chars = noteLength(body);
  const over = chars > NOTE_MAX_CHARS;

  useEffect(() => {
    area.current?.focus();
  }, []);
  useEffect(() => {
    if (state.status !== 'saved') return;
    // closed once the list holds the saved text, so the old one never flashes back
    void (ctx ? ctx.refresh() : Promise.resolve()).finally(onDone);
    // a save is answered once: `state` changes identity on every answer
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [state]);

  if (!ctx) return null;
  return (
    <form ref={form} action={formAction} className="note-form" data-testid="note-form" aria-label={label}>
      {target.kind === 'add' ? (
        <>
          <input type="hidden" name="runId" value={ctx.runId} />
          <input type="hidden" name="nodeId" value={target.nodeId ?? ''} />
          <input type="hidden" name="seq" value={target.seq ?? ''} />
        </>
      ) : (
        <input type="hidden" name="noteId" value={target.noteId} />
      )}
      <textarea
        ref={area}
        name="body"
        rows={3}
        value={body}
        aria-label={label}
        aria-invalid={over || undefined}
        placeholder="What did you find? Markdown works: **bold**, _italic_, `code`, lists, links."
        onChange={(e) => setBody(e.target.value)}
        onKeyDown={(e) => {
          if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) {
            e.preventDefault();
            form.current?.requestSubmit();
          }
        }}
      />
      <div className="form-actions">
        <button type="submit" className="small" disabled={pending || !body.trim()} data-testid="note-save">
          {pending ? 'Saving…' : target.kind === 'add' ? 'Add note' : 'Save'}
        </button>
        <button type="button" className="small secondary" onClick={onDone} disabled={pending}>
          Cancel
        </button>
        <span className={`note-chars${over ? ' over' : ''}`} data-testid="note-chars">
          {chars.toLocaleString('en-US')} / {NOTE_MAX_CHARS.toLocaleString('en-US')}
        </span>
      </div>
      {!pending ? <NoteError state={state} /> : null}
    </form>
  );
}
