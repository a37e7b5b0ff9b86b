import { describe, expect, it } from 'vitest';
import { failureSignature, normaliseFailureText, SIGNATURE_TEXT_MAX } from './failure-signature';

const base = { level: 'attempt' as const, agent: 'classifier', model: 'openrouter:a', code: 'invalid_output' };

describe('failure signatures', () => {
  it('group messages that differ only in ids, numbers and quoted values', () => {
    const a = failureSignature({ ...base, message: 'answer does not match: /queue must be one of "billing", got "x" after 1,204 ms (run 3f2a9c1e-1111-4222-8333-444455556666)' });
    const b = failureSignature({ ...base, message: 'answer does not match: /queue must be one of "tech", got "y" after 87 ms (run 0b5d7e00-aaaa-4bbb-8ccc-ddddeeeeffff)' });
    expect(a.sig).toBe(b.sig);
    expect(a.normalised).toBe('answer does not match: /queue must be one of "…", got "…" after <n> (run <id>)');
    expect(a.sig).toMatch(/^[0-9a-f]{16}$/);
  });

  it('tell apart another agent, model, cause, level or wording', () => {
    const sig = (over: Partial<Parameters<typeof failureSignature>[0]>) => failureSignature({ ...base, message: 'cut off (finish reason length)', ...over }).sig;
    const all = [
      sig({}),
      sig({ agent: 'writer' }),
      sig({ model: 'openrouter:b' }),
      sig({ code: 'truncated' }),
      sig({ level: 'node' }),
      sig({ message: 'refused (finish reason content_filter)' }),
    ];
    expect(new Set(all).size).toBe(all.length);
  });

  it('an apostrophe inside a word is no quote: the words between two of them stay, and tell failures apart', () => {
    const text = "openrouter:openai/gpt-oss-20b's answer does not match the node's output schema: /queue must be one of 'billing', 'tech'";
    expect(normaliseFailureText(text)).toBe("openrouter:openai/gpt-oss-20b's answer does not match the node's output schema: /queue must be one of '…', '…'");
    const a = failureSignature({ ...base, message: "the model's answer was cut and the node's retries ran out" });
    const b = failureSignature({ ...base, message: "the model's answer was refused and the node's fallback ran out" });
    expect(a.sig).not.toBe(b.sig);
  });

  it('keeps redaction placeholders and folds whitespace; a long text is cut', () => {
    expect(normaliseFailureText('mail  [EMAIL]\n on\tfile')).toBe('mail [EMAIL] on file');
    expect(normaliseFailureText(null)).toBe('');
    expect(normaliseFailureText('openrouter:google/gemini-2.5-flash-lite: status 503 at /items/0')).toBe('openrouter:google/gemini-2.5-flash-lite: status <n> at /items/<n>');
    expect(normaliseFailureText('word '.repeat(100)).length).toBe(SIGNATURE_TEXT_MAX);
  });
});
