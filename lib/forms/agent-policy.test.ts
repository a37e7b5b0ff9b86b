// The policy form places server-side check diagnostics by their field path, never by their text.
import { describe, expect, it } from 'vitest';
import { builtInProvider, parseAgentYaml } from '@/lib/project';
import { agentPolicyFormSchema, diagnosticErrors, diagnosticField, policyErrors } from './agent-policy';

describe('diagnosticField', () => {
  it.each([
    [['model'], { field: 'model' }],
    [['fallback_models', 1], { field: 'fallback_models', index: 1 }],
    [['fallback_models'], { field: 'fallback_models' }],
    [['output', 'strict'], { field: 'output.strict' }],
    [['output', 'on_truncated'], { field: 'output.on_truncated' }],
    [['output', 'nope'], { field: 'form' }],
    [['settings', 'temperature'], { field: 'form' }],
    [[], { field: 'form' }],
  ] as const)('%j → %j', (path, expected) => expect(diagnosticField(path)).toEqual(expected));
});

describe('diagnosticErrors', () => {
  it('uses the path, not the message', () => {
    // a message that names another field must not move the error there
    const errors = diagnosticErrors([{ code: 'E_OUTCOME_FALLBACK', message: 'mentions on_refusal and model "x"', hint: 'h', path: ['output', 'on_truncated'] }]);
    expect(errors).toEqual({ 'output.on_truncated': [{ code: 'E_OUTCOME_FALLBACK', message: 'mentions on_refusal and model "x"', hint: 'h', index: undefined }] });
  });

  it('places E_PROVIDER of a fallback model at its row', () => {
    const yaml = 'apiVersion: "aqven/v1"\nkind: "Agent"\nmodel: "acme:m"\nfallback_models:\n- "openrouter:a/b"\n- "acme:n"\n';
    const { diagnostics } = parseAgentYaml(yaml, 'agents/x.yaml', { providers: { openrouter: builtInProvider('openrouter')! } });
    const errors = diagnosticErrors(diagnostics);
    expect(errors.model).toHaveLength(1);
    expect(errors.fallback_models).toMatchObject([{ code: 'E_PROVIDER', index: 1 }]);
  });

  it('places E_CHAIN_DUPLICATE at the row that repeats the primary model, not at the model', () => {
    const yaml = 'apiVersion: "aqven/v1"\nkind: "Agent"\nmodel: "openrouter:a/b"\nfallback_models:\n- "openrouter:c/d"\n- "openrouter:a/b"\n';
    const { diagnostics } = parseAgentYaml(yaml, 'agents/x.yaml', { providers: { openrouter: builtInProvider('openrouter')! } });
    const errors = diagnosticErrors(diagnostics);
    expect(errors.model).toBeUndefined();
    expect(errors.fallback_models).toMatchObject([{ code: 'E_CHAIN_DUPLICATE', index: 1 }]);
  });

  it('the form schema refuses a model id a URL would read as structure, at its field, with the words of aqven check (E_MODEL)', () => {
    const r = agentPolicyFormSchema.safeParse({
      model: 'google:x/../../../v1beta/cachedContents?',
      fallback_models: ['openrouter:google/gemini-2.5-flash-lite', 'google:a#b'],
      output: { retries: 1, on_error: 'retry', on_refusal: 'fail', on_truncated: 'fail', strict: false },
    });
    expect(r.success).toBe(false);
    const errors = policyErrors(r.error!);
    expect(errors.model).toMatchObject([{ code: 'E_MODEL', message: expect.stringContaining('its model id contains the character "?"') }]);
    expect(errors.fallback_models).toMatchObject([{ code: 'E_MODEL', index: 1, message: expect.stringContaining('its model id contains the character "#"') }]);
    const file = 'apiVersion: "aqven/v1"\nkind: "Agent"\nmodel: "google:x/../../../v1beta/cachedContents?"\n';
    expect(parseAgentYaml(file, 'agents/x.yaml').diagnostics.map((d) => [d.code, d.message])).toEqual([['E_MODEL', errors.model![0]!.message]]);
  });

  it('the form schema rejects the same model twice at its row (policyErrors)', () => {
    const r = agentPolicyFormSchema.safeParse({
      model: 'openrouter:a/b',
      fallback_models: ['openrouter:a/b'],
      output: { retries: 1, on_error: 'retry', on_refusal: 'fail', on_truncated: 'fail', strict: false },
    });
    expect(r.success).toBe(false);
    expect(policyErrors(r.error!).fallback_models).toMatchObject([{ code: 'E_CHAIN_DUPLICATE', index: 0 }]);
  });

  it.each([-1, 2.5, 99, Number.NaN])('retries %s is refused at its field with the allowed range, in words', (retries) => {
    const r = agentPolicyFormSchema.safeParse({
      model: 'openrouter:a/b',
      fallback_models: [],
      output: { retries, on_error: 'retry', on_refusal: 'fail', on_truncated: 'fail', strict: false },
    });
    expect(r.success).toBe(false);
    expect(policyErrors(r.error!)['output.retries']).toEqual([
      { code: 'E_FIELD', message: expect.stringMatching(/^retries must be a whole number from 0 to \d+$/), hint: undefined, index: undefined },
    ]);
  });
});
