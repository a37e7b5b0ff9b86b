import { describe, expect, it } from 'vitest';
import { renderTemplate, templateRefs } from './prompt-template';

describe('renderTemplate', () => {
  const ctx = {
    input: { ticket: 'My card was charged twice', meta: { lang: 'en' } },
    nodes: {
      classify: { output: { queue: 'billing', confidence: 0.9 } },
      draft: { output: { sections: [{ heading: 'Intro', body: 'Hi' }] } },
      note: { output: 'plain text' },
    },
  };

  it('fills input and node outputs, with or without spaces inside the braces', () => {
    expect(renderTemplate('Draft for {{ nodes.classify.output.queue }}: {{input.ticket}}', ctx)).toBe('Draft for billing: My card was charged twice');
    expect(renderTemplate('{{   nodes.note.output   }}', ctx)).toBe('plain text');
  });

  it('renders objects, arrays and numbers as JSON, and indexes arrays by number', () => {
    expect(renderTemplate('{{ nodes.classify.output }}', ctx)).toBe('{"queue":"billing","confidence":0.9}');
    expect(renderTemplate('{{ nodes.classify.output.confidence }}', ctx)).toBe('0.9');
    expect(renderTemplate('{{ input.meta }}', ctx)).toBe('{"lang":"en"}');
    expect(renderTemplate('{{ nodes.draft.output.sections.0.heading }}', ctx)).toBe('Intro');
  });

  it('renders a missing value as empty and leaves text that is not a reference alone', () => {
    expect(renderTemplate('[{{ input.missing }}]', ctx)).toBe('[]');
    expect(renderTemplate('JSON like {"a": 1} stays; so does {{ bad ref }}', ctx)).toBe('JSON like {"a": 1} stays; so does {{ bad ref }}');
  });
});

describe('templateRefs', () => {
  it('lists references with their offsets', () => {
    expect(templateRefs('a {{ input.x }} b {{nodes.n.output.y}}')).toEqual({
      refs: [
        { raw: '{{ input.x }}', path: ['input', 'x'], start: 2 },
        { raw: '{{nodes.n.output.y}}', path: ['nodes', 'n', 'output', 'y'], start: 18 },
      ],
      errors: [],
    });
  });

  it('reports bad syntax instead of throwing', () => {
    const { refs, errors } = templateRefs('{{ }} {{ input..x }} {{ input.ok }} {{ input.y');
    expect(refs.map((r) => r.raw)).toEqual(['{{ input.ok }}']);
    expect(errors.map((e) => e.message)).toEqual(['empty reference {{ }}', '{{ input..x }} is not a dot path like {{ input.ticket }}', '"{{" is never closed with "}}"']);
  });
});
