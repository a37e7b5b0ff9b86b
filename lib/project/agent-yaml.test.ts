import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { agentPolicyFormSchema, issueCode, parseAgentYaml, updateAgentYaml } from './index';

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

  it('adds new keys as one line each, in the file\'s quoting style', () => {
    const out = updateAgentYaml(CLASSIFIER, { output: { on_refusal: 'fallback', strict: false } });
    expect(out).toBe(CLASSIFIER.replace('# default retry\n', '# default retry\n  strict: false\n  on_refusal: "fallback"\n'));
  });

  it('rewrites the fallback chain in order and keeps the comment of an unchanged item', () => {
    const out = updateAgentYaml(CLASSIFIER, { model: 'openrouter:openai/gpt-oss-20b', fallback_models: ['openrouter:openai/gpt-oss-20b', 'anthropic:claude-haiku'] });
    expect(out).toContain('model: "openrouter:openai/gpt-oss-20b"             # cheap and fast\n');
    expect(out).toContain('fallback_models:                  # tried in order by `fallback`\n- "openrouter:openai/gpt-oss-20b" # the big one\n- "anthropic:claude-haiku"\nsettings:');
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
