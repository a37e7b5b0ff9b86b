'use client';
// The notes on a run, a node or an attempt, oldest first: who wrote each and when, the text as
// markdown; the author's own notes can be edited or deleted (the server checks it is theirs), and
// anyone signed in may add one.
import { useActionState, useEffect, useState } from 'react';
import { deleteNoteAction } from '@/lib/actions/delete-note';
import type { NoteView } from '@/lib/dashboard/note-types';
import type { NoteFormState } from '@/lib/forms/notes';
import { LocalTime } from '@/components/ui/local-time';
import { NoteError, NoteForm } from './note-form';
import { NoteMarkdown } from './note-markdown';
import { useNotes } from './notes-context';

const IDLE: NoteFormState = { status: 'idle' };

function DeleteNote({ id }: { id: number }) {
  const ctx = useNotes();
  const [asking, setAsking] = useState(false);
  const [state, formAction, pending] = useActionState(deleteNoteAction, IDLE);
  const refresh = ctx?.refresh;
  useEffect(() => {
    if (state.status === 'deleted') void refresh?.();
  }, [state, refresh]);
  if (!asking)
    return (
      <button type="button" className="icon small danger" onClick={() => setAsking(true)} data-testid="note-delete">
        Delete
      </button>
    );
  return (
    <form action={formAction} className="note-confirm">
      <input type="hidden" name="noteId" value={id} />
      <span>Delete this note?</span>
      <button type="submit" className="icon small danger" disabled={pending} data-testid="note-delete-confirm">
        {pending ? 'Deleting…' : 'Delete'}
      </button>
      <button type="button" className="icon small" onClick={() => setAsking(false)} disabled={pending}>
        Keep
      </button>
      {!pending ? <NoteError state={state} /> : null}
    </form>
  );
}

function NoteItem({ note, mine }: { note: NoteView; mine: boolean }) {
  const [editing, setEditing] = useState(false);
  return (
    <article className="note-item" id={`note-${note.id}`} data-testid="note" data-note={note.id} data-author={note.author}>
      <header className="note-head">
        <strong className="note-author">{note.author}</strong>
        <span className="muted small">
          <LocalTime ms={note.createdAt} withDate />
          {note.updatedAt > note.createdAt ? (
            <span className="note-edited" title={`edited ${new Date(note.updatedAt).toISOString()}`}>
              {' '}
              · edited
            </span>
          ) : null}
        </span>
        {mine && !editing ? (
          <span className="note-tools">
            <button type="button" className="icon small" onClick={() => setEditing(true)} data-testid="note-edit">
              Edit
            </button>
            <DeleteNote id={note.id} />
          </span>
        ) : null}
      </header>
      {editing ? (
        <NoteForm target={{ kind: 'edit', noteId: note.id, body: note.body }} onDone={() => setEditing(false)} label="Edit the note" />
      ) : (
        <NoteMarkdown body={note.body} />
      )}
    </article>
  );
}

/** The thread of a run (no node), a node (no seq) or an attempt (node and seq). */
export function NoteThread({ nodeId = null, seq = null }: { nodeId?: string | null; seq?: number | null }) {
  const ctx = useNotes();
  const [adding, setAdding] = useState(false);
  if (!ctx) return null;
  const notes = ctx.notes.filter((n) => n.nodeId === nodeId && n.seq === seq);
  const what = nodeId === null ? 'this run' : seq === null ? `node ${nodeId}` : `attempt #${seq}`;
  const kind = nodeId === null ? 'run' : seq === null ? 'node' : 'attempt';
  const list = (
    <>
      {notes.map((n) => (
        <NoteItem key={n.id} note={n} mine={n.author === ctx.me} />
      ))}
      {adding ? (
        <NoteForm target={{ kind: 'add', nodeId, seq }} onDone={() => setAdding(false)} label={`A note on ${what}`} />
      ) : (
        <button type="button" className={kind === 'run' ? 'small secondary note-add' : 'note-add note-add-quiet'} onClick={() => setAdding(true)} data-testid="note-add">
          {kind === 'run' ? 'Add a note' : `+ Note on this ${kind}`}
        </button>
      )}
    </>
  );
  if (kind === 'run')
    return (
      <section className="panel notes notes-run" aria-label="Notes on this run" data-testid="note-thread" data-kind="run">
        <h2>Notes{notes.length ? <span className="muted"> · {notes.length}</span> : null}</h2>
        {ctx.refreshFailed ? <p className="error-text small">Could not refresh the notes; showing the last ones read.</p> : null}
        {ctx.older ? (
          <button type="button" className="small secondary note-older" onClick={ctx.showOlder} disabled={ctx.loadingOlder} data-testid="note-older">
            {ctx.loadingOlder ? 'Loading older notes…' : 'Show older notes'}
          </button>
        ) : null}
        {notes.length === 0 && !adding && !ctx.older ? <p className="muted small">No notes on this run yet: leave what you found for your team.</p> : null}
        {list}
      </section>
    );
  return (
    <div className={`notes notes-${kind}`} aria-label={`Notes on ${what}`} role="group" data-testid="note-thread" data-kind={kind}>
      {list}
    </div>
  );
}

/** How many notes a node and its attempts carry, for its line on the timeline (seen while collapsed). */
export function NoteCount({ nodeId }: { nodeId: string }) {
  const ctx = useNotes();
  const n = ctx?.notes.filter((x) => x.nodeId === nodeId).length ?? 0;
  if (!n) return null;
  const label = `${n} note${n === 1 ? '' : 's'} on this node and its attempts`;
  return (
    <span className="note-count" data-testid="note-count" data-count={n} title={label} aria-label={label} role="img">
      <svg viewBox="0 0 16 16" width="11" height="11" aria-hidden="true">
        <path d="M2.5 3.5h11v7h-6l-3 2.5v-2.5h-2z" fill="none" stroke="currentColor" strokeWidth="1.5" strokeLinejoin="round" />
      </svg>
      {n}
    </span>
  );
}
