import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { lineDiff } from '@/lib/shared/line-diff';
import { sameYamlValue, type AgentYamlChanges } from './agent-yaml';
import { agentPolicyFormSchema, issueCode, parseAgentYaml, updateAgentYaml } from './index';
import type { AgentDef } from './types';

const CLASSIFIER = `# Sorts tickets; owned by the support team
apiVersion: "aqven/v1"
kind: "Agent"
description: "Sorts a support ticket into a queue"
model: "openrouter:google/gemini-2.5-flash-lite"   # cheap and fast
fallback_models:                  # tried in order by \`fallback\`
- "openrouter:openai/gpt-oss-20b" # the big one
settings:
  temperature: 0.2
output:
  retries: 3                      # default 1
  on_error: "fallback"            # default retry
system: "You sort support tickets."
`;

describe('updateAgentYaml', () => {
  it('changes only the values, keeping comments, their columns, quoting and other keys', () => {
    const out = updateAgentYaml(CLASSIFIER, { output: { retries: 5, on_error: 'retry' } });
    expect(out).toBe(
      CLASSIFIER.replace('retries: 3                      # default 1', 'retries: 5                      # default 1').replace(
        'on_error: "fallback"            # default retry',
        'on_error: "retry"               # default retry',
      ),
    );
  });

  it("adds new keys as one line each, in the file's quoting style", () => {
    const out = updateAgentYaml(CLASSIFIER, { output: { on_refusal: 'fallback', strict: false } });
    expect(out).toBe(CLASSIFIER.replace('# default retry\n', '# default retry\n  strict: false\n  on_refusal: "fallback"\n'));
  });

  it('rewrites the fallback chain in order and keeps the comment of an unchanged item', () => {
    const out = updateAgentYaml(CLASSIFIER, { model: 'openrouter:openai/gpt-oss-20b', fallback_models: ['openrouter:openai/gpt-oss-20b', 'anthropic:claude-haiku'] });
    expect(out).toContain('model: "openrouter:openai/gpt-oss-20b"             # cheap and fast\n');
    expect(out).toContain(
      'fallback_models:                  # tried in order by `fallback`\n- "openrouter:openai/gpt-oss-20b" # the big one\n- "anthropic:claude-haiku"\nsettings:',
    );
    expect(out.startsWith('# Sorts tickets; owned by the support team\n')).toBe(true);
    expect(parse(out).system).toBe('You sort support tickets.');
  });

  it('removes the fallback chain when it is emptied, and a null field goes back to its default', () => {
    const out = updateAgentYaml(CLASSIFIER, { fallback_models: [], output: { on_error: null } });
    expect(out).not.toContain('fallback_models');
    expect(out).not.toContain('on_error');
    expect(out).toContain('retries: 3                      # default 1\nsystem');
    const { agent } = parseAgentYaml(out, 'agents/classifier.yaml');
    expect(agent!.output.onError).toBe('retry');
    expect(agent!.fallbackModels).toEqual([]);
  });

  it('adds fallback_models after model and an output block to a minimal file', () => {
    const out = updateAgentYaml('apiVersion: "aqven/v1"\nkind: "Agent"\nmodel: "openrouter:a/b"\n', {
      fallback_models: ['openrouter:c/d'],
      output: { retries: 2, on_error: 'fallback' },
    });
    expect(out).toBe('apiVersion: "aqven/v1"\nkind: "Agent"\nmodel: "openrouter:a/b"\nfallback_models:\n- "openrouter:c/d"\noutput:\n  retries: 2\n  on_error: "fallback"\n');
    expect(parseAgentYaml(out, 'agents/x.yaml').diagnostics).toEqual([]);
  });

  it('still keeps comments for layouts it cannot splice (flow mappings)', () => {
    const text = '# mine\napiVersion: "aqven/v1"\nkind: "Agent"\nmodel: "openrouter:a/b" # main\noutput: { retries: 2 }\n';
    const out = updateAgentYaml(text, { output: { retries: 4, on_refusal: 'retry' } });
    expect(out).toContain('# mine');
    expect(out).toContain('# main');
    expect(parse(out)).toEqual({ apiVersion: 'aqven/v1', kind: 'Agent', model: 'openrouter:a/b', output: { retries: 4, on_refusal: 'retry' } });
  });

  it('refuses a file that is not valid YAML', () => {
    expect(() => updateAgentYaml('model: [', { model: 'a:b' })).toThrow(/not valid YAML/);
  });
});

// ── Every line a save does not need to change stays byte for byte ─────────────────────────────

const showcase = (name: string) => readFileSync(join(__dirname, '../../showcase/agents', `${name}.yaml`), 'utf8');

const LONG_PROMPT =
  'You write short, friendly, accurate replies for a support team. Never invent account details. If you are not sure, say so and suggest who can help; keep the reply under 120 words and sign it as the support team.';

/** own-line and aligned trailing comments, a blank line, a folded description, a one-line prompt of 220 characters, no fallback chain */
const COMMENTED = `# Writes replies for the support team.
# Owned by: support-eng
apiVersion: "aqven/v1"
kind: "Agent"
description: >
  Writes replies to customers and notes for the support team, in the voice of the
  support handbook; never promises refunds.
model: "openrouter:openai/gpt-oss-20b"        # the default model

# the system prompt is long on purpose: it must not be re-wrapped
system: "${LONG_PROMPT}"
settings:
  temperature: 0.7                            # a little warmth
  max_tokens: 1024                            # replies are short
output:
  # how hard to try
  retries: 1                                  # one retry on a bad answer
  on_error: "retry"                           # transport trouble: try again
  on_refusal: "fail"
  on_truncated: "fail"                        # a cut reply is no reply
  strict: false
`;

/** single quotes, an indented chain with a comment on every model and one above, a literal block prompt, a prompt quoted over several lines */
const CHAIN = `apiVersion: 'aqven/v1'
kind: 'Agent'
model: 'openrouter:google/gemini-2.5-flash-lite'   # cheap and fast
fallback_models:                                   # tried in order
  # the big one first
  - 'openrouter:openai/gpt-oss-20b'                # solid
  - 'openrouter:openai/gpt-oss-120b'               # last resort
description: "Sorts a support ticket into the billing, tech or sales queue, and says why in one
  short sentence the support team can read at a glance."
system: |
  You sort support tickets into the billing, tech or sales queue.
      Indented lines stay as they are.
output:
  retries: 3
  on_error: 'fallback'
`;

/** flow collections: a chain and an output policy written inline, each with a trailing comment */
const FLOW = `apiVersion: "aqven/v1"
kind: "Agent"
model: "openrouter:a/b"   # main
fallback_models: ["openrouter:c/d", "openrouter:e/f"]   # chain
system: "${LONG_PROMPT}"
output: { retries: 2, on_error: "retry" }   # inline
settings: { temperature: 0.2 }
`;

const FILES: [string, string][] = [
  ['showcase classifier (an aligned trailing comment)', showcase('classifier')],
  ['showcase writer (a prompt longer than 80 columns)', showcase('writer')],
  ['showcase gpt (no prompt, no chain)', showcase('gpt')],
  ['commented, long prompt, no chain', COMMENTED],
  ['indented chain with comments, block prompt', CHAIN],
  ['flow chain and flow output', FLOW],
  ['commented, CRLF line ends', COMMENTED.replace(/\n/g, '\r\n')],
  ['classifier, CRLF line ends', showcase('classifier').replace(/\n/g, '\r\n')],
];

interface EditCase {
  name: string;
  /** the changes for this file's agent, or null where the edit does not apply */
  changes: (a: AgentDef) => AgentYamlChanges | null;
}

const flip = (p: string) => (p === 'retry' ? 'fail' : 'retry');
/** as the form requires (E_OUTCOME_FALLBACK): an emptied chain takes `fallback` out of the on_* fields */
function withoutFallback(a: AgentDef, c: AgentYamlChanges): AgentYamlChanges {
  if (c.fallback_models?.length) return c;
  const o = a.output;
  const output = { on_error: o.onError, on_refusal: o.onRefusal, on_truncated: o.onTruncated };
  const fix = Object.fromEntries(
    Object.entries(output)
      .filter(([, v]) => v === 'fallback')
      .map(([k]) => [k, 'retry']),
  );
  return Object.keys(fix).length ? { ...c, output: fix } : c;
}
const EDITS: EditCase[] = [
  { name: 'the model', changes: () => ({ model: 'openrouter:x/new-model' }) },
  { name: 'a fallback model added (the first one, where there is none)', changes: (a) => ({ fallback_models: [...a.fallbackModels, 'openrouter:x/added'] }) },
  {
    name: 'the first fallback model with on_error fallback',
    changes: (a) => (a.fallbackModels.length ? null : { fallback_models: ['openrouter:x/added'], output: { on_error: 'fallback' } }),
  },
  { name: 'the last fallback model removed', changes: (a) => (a.fallbackModels.length ? withoutFallback(a, { fallback_models: a.fallbackModels.slice(0, -1) }) : null) },
  { name: 'every fallback model removed', changes: (a) => (a.fallbackModels.length ? withoutFallback(a, { fallback_models: [] }) : null) },
  { name: 'the first fallback model removed', changes: (a) => (a.fallbackModels.length > 1 ? { fallback_models: a.fallbackModels.slice(1) } : null) },
  { name: 'the chain reordered', changes: (a) => (a.fallbackModels.length > 1 ? { fallback_models: [...a.fallbackModels].reverse() } : null) },
  { name: 'a fallback model edited in its place', changes: (a) => (a.fallbackModels.length ? { fallback_models: ['openrouter:x/edited', ...a.fallbackModels.slice(1)] } : null) },
  { name: 'output.retries', changes: (a) => ({ output: { retries: a.output.retries + 1 } }) },
  { name: 'output.on_error', changes: (a) => ({ output: { on_error: flip(a.output.onError) } }) },
  { name: 'output.on_refusal', changes: (a) => ({ output: { on_refusal: flip(a.output.onRefusal) } }) },
  { name: 'output.on_truncated', changes: (a) => ({ output: { on_truncated: flip(a.output.onTruncated) } }) },
  { name: 'output.strict', changes: (a) => ({ output: { strict: !a.output.strict } }) },
  { name: 'output.retries back to its default', changes: () => ({ output: { retries: null } }) },
  {
    name: 'everything at once',
    changes: (a) => ({
      model: 'openrouter:x/new-model',
      fallback_models: [...a.fallbackModels, 'openrouter:x/added'],
      output: { retries: 7, on_error: 'fallback', on_refusal: 'retry', on_truncated: 'retry', strict: true },
    }),
  },
];

/** The lines a change of each key may touch; any other changed line is a defect. */
function editableLine(changes: AgentYamlChanges): RegExp {
  const parts: string[] = [];
  if (changes.model !== undefined) parts.push('model:');
  if (changes.fallback_models !== undefined) parts.push('fallback_models:', '\\s+- ', '- ', '\\s*#');
  if (changes.output) parts.push('output:', `\\s+(${Object.keys(changes.output).join('|')}):`);
  return new RegExp(`^(${parts.join('|')})`);
}

/** What the file's agent should be after the changes. */
function intended(a: AgentDef, c: AgentYamlChanges) {
  const o = c.output ?? {};
  const pick = <T>(v: T | null | undefined, now: T, dflt: T) => (v === undefined ? now : v === null ? dflt : v);
  return {
    model: c.model ?? a.model,
    fallbackModels: c.fallback_models === undefined ? a.fallbackModels : (c.fallback_models ?? []),
    ...(a.system !== undefined && { system: a.system }),
    settings: a.settings,
    output: {
      strict: pick(o.strict, a.output.strict, true),
      retries: pick(o.retries, a.output.retries, 1),
      onError: pick(o.on_error, a.output.onError, 'retry'),
      onRefusal: pick(o.on_refusal, a.output.onRefusal, 'fail'),
      onTruncated: pick(o.on_truncated, a.output.onTruncated, 'fail'),
    },
  };
}

describe('a save leaves every line it does not need to change byte-identical', () => {
  const cases = FILES.flatMap(([file, text]) => {
    const agent = parseAgentYaml(text, 'agents/a.yaml').agent!;
    return EDITS.map((e) => [file, e.name, text, agent, e.changes(agent)] as const).filter((c) => c[4] !== null);
  });

  it('has a file for every kind of edit', () => {
    expect(new Set(cases.map((c) => c[1]))).toEqual(new Set(EDITS.map((e) => e.name)));
  });

  it.each(cases)('%s: %s', (_file, _edit, before, agent, changes) => {
    const after = updateAgentYaml(before, changes!);
    const allowed = editableLine(changes!);
    const changed = lineDiff(before, after).filter((l) => l.kind !== 'same');
    expect(changed.length).toBeGreaterThan(0);
    // every changed line belongs to a field the save changes: nothing else was re-printed
    expect(changed.filter((l) => !allowed.test(l.text)).map((l) => `${l.kind} ${l.text}`)).toEqual([]);
    // the lines kept are kept as they were, line ends included
    const kept = new Set(before.split('\n'));
    const keptAfter = after.split('\n').filter((l) => !allowed.test(l));
    expect(keptAfter.filter((l) => !kept.has(l))).toEqual([]);
    if (before.includes('\r\n')) expect(after.replace(/\r\n/g, '')).not.toContain('\n');
    // and the file says what was intended, the rest of it unchanged
    const parsed = parseAgentYaml(after, 'agents/a.yaml');
    expect(parsed.diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
    expect(parsed.agent).toMatchObject(intended(agent, changes!));
    const rest = (t: string) => {
      const { model: _m, fallback_models: _f, output: _o, ...others } = parse(t) as Record<string, unknown>;
      return others;
    };
    expect(rest(after)).toEqual(rest(before));
  });

  it('adds the first fallback model to the showcase writer as two new lines after model, its long prompt untouched', () => {
    const before = showcase('writer');
    const after = updateAgentYaml(before, { fallback_models: ['openrouter:google/gemini-2.5-flash-lite'] });
    expect(after).toBe(before.replace(/^(model: .*\n)/m, '$1fallback_models:\n- "openrouter:google/gemini-2.5-flash-lite"\n'));
  });

  it('removing the last fallback model takes the key and its lines, nothing else', () => {
    const before = showcase('classifier');
    expect(updateAgentYaml(before, { fallback_models: [] })).toBe(before.replace('fallback_models:\n- "openrouter:openai/gpt-oss-20b"\n', ''));
  });

  it('keeps a trailing comment in its column when the value before it changes length', () => {
    const after = updateAgentYaml(showcase('classifier'), { output: { strict: true } });
    const line = after.split('\n').find((l) => l.startsWith('  strict:'))!;
    const was = showcase('classifier')
      .split('\n')
      .find((l) => l.startsWith('  strict:'))!;
    expect(line).toBe(was.replace('strict: false', 'strict: true '));
    expect(line.indexOf('#')).toBe(was.indexOf('#'));
  });

  it('moves each fallback model with its comments when the chain is reordered', () => {
    const after = updateAgentYaml(CHAIN, { fallback_models: ['openrouter:openai/gpt-oss-120b', 'openrouter:openai/gpt-oss-20b'] });
    expect(after).toContain(
      "fallback_models:                                   # tried in order\n  # the big one first\n  - 'openrouter:openai/gpt-oss-120b'               # last resort\n  - 'openrouter:openai/gpt-oss-20b'                # solid\n",
    );
  });

  it('changes only the line of a flow output policy, keeping its style and comment', () => {
    const after = updateAgentYaml(FLOW, { output: { retries: 4, on_refusal: 'retry' } });
    expect(after).toBe(FLOW.replace('output: { retries: 2, on_error: "retry" }   # inline', 'output: { retries: 4, on_error: "retry", on_refusal: "retry" } # inline'));
  });
});

describe('sameYamlValue', () => {
  it('ignores the order of mapping keys but not of sequence items', () => {
    expect(sameYamlValue({ a: 1, b: { c: [1, 2] } }, { b: { c: [1, 2] }, a: 1 })).toBe(true);
    expect(sameYamlValue({ a: [1, 2] }, { a: [2, 1] })).toBe(false);
    expect(sameYamlValue({ a: 1 }, { a: 1, b: undefined })).toBe(false);
    expect(sameYamlValue({ a: null }, { a: 0 })).toBe(false);
    expect(sameYamlValue([{ a: '1' }], [{ a: 1 }])).toBe(false);
  });
});

describe('agentPolicyFormSchema', () => {
  const valid = {
    model: 'openrouter:google/gemini-2.5-flash-lite',
    fallback_models: ['openrouter:openai/gpt-oss-20b'],
    output: { retries: 3, on_error: 'fallback', on_refusal: 'fail', on_truncated: 'fail', strict: false },
  };

  it('accepts the showcase classifier', () => {
    expect(agentPolicyFormSchema.safeParse(valid).success).toBe(true);
  });

  it('rejects fallback without fallback models with E_OUTCOME_FALLBACK on the field', () => {
    const r = agentPolicyFormSchema.safeParse({ ...valid, fallback_models: [], output: { ...valid.output, on_truncated: 'fallback' } });
    expect(r.success).toBe(false);
    const issues = r.error!.issues.map((i) => ({ path: i.path, code: issueCode(i) }));
    expect(issues).toEqual([
      { path: ['output', 'on_error'], code: 'E_OUTCOME_FALLBACK' },
      { path: ['output', 'on_truncated'], code: 'E_OUTCOME_FALLBACK' },
    ]);
  });

  it('reports the fallback rule together with other field errors', () => {
    const r = agentPolicyFormSchema.safeParse({ ...valid, fallback_models: [], output: { ...valid.output, retries: 11 } });
    expect(r.error!.issues.map(issueCode).sort()).toEqual(['E_FIELD', 'E_OUTCOME_FALLBACK']);
  });

  it('checks model strings (E_MODEL) and retries 0..10', () => {
    const r = agentPolicyFormSchema.safeParse({ ...valid, model: 'gpt-4o', fallback_models: ['openrouter:'], output: { ...valid.output, retries: -1 } });
    expect(r.error!.issues.map((i) => [i.path.join('.'), issueCode(i)])).toEqual([
      ['model', 'E_MODEL'],
      ['fallback_models.0', 'E_MODEL'],
      ['output.retries', 'E_FIELD'],
    ]);
    expect(agentPolicyFormSchema.safeParse({ ...valid, output: { ...valid.output, retries: 10 } }).success).toBe(true);
    expect(agentPolicyFormSchema.safeParse({ ...valid, output: { ...valid.output, retries: 1.5 } }).success).toBe(false);
  });
});
