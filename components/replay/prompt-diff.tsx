// The request the original node sent (its first attempt's) against the one today's files make of
// the same inputs, line by line: removed lines red, added green, the rest as context.
import type { DiffLine } from '@/lib/dashboard/replay-types';

const CLASS = { '-': 'd-del', '+': 'd-add', ' ': undefined } as const;

export function PromptDiff({ lines, changed, hadRequest }: { lines: DiffLine[]; changed: boolean; hadRequest: boolean }) {
  return (
    <div data-testid="prompt-diff" data-changed={changed}>
      <p className="muted small">
        {!hadRequest
          ? 'The original node made no request (it never ran): the whole request is new.'
          : changed
            ? 'The request differs from the original’s: − as sent then, + as the current files would send it.'
            : 'The same request as the original’s: the prompt did not change (the policy may have).'}
      </p>
      <pre className="diff replay-diff">
        {lines.map((l, i) => (
          <span key={i} className={CLASS[l.op]} data-op={l.op === ' ' ? 'same' : l.op === '+' ? 'add' : 'del'}>
            {l.op === ' ' ? '  ' : `${l.op} `}
            {l.text}
          </span>
        ))}
      </pre>
    </div>
  );
}
