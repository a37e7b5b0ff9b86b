// The project the benchmarks run: one agent, one flow of one node with an output schema.
export function oneNodeProject(name: string, o: { model?: string; retries?: number } = {}): Record<string, string> {
  const retries = o.retries === undefined ? '' : `output:\n  retries: ${o.retries}\n`;
  return {
    'aqven.yaml': `apiVersion: "aqven/v1"\nkind: "Project"\nname: "${name}"\n`,
    'agents/sorter.yaml': `apiVersion: "aqven/v1"\nkind: "Agent"\nmodel: "openrouter:${o.model ?? 'openai/gpt-oss-20b'}"\n${retries}`,
    'flows/one.yaml': [
      'apiVersion: "aqven/v1"',
      'kind: "Flow"',
      'input: { type: object, properties: { ticket: { type: string } }, required: [ticket] }',
      'nodes:',
      '  classify:',
      '    agent: "sorter"',
      '    prompt: "Sort: {{ input.ticket }}"',
      '    output: { type: object, properties: { queue: { enum: [billing, tech, sales] } }, required: [queue] }',
    ].join('\n'),
  };
}
