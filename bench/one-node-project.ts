// The project the benchmarks run: one agent, one flow of one node with an output schema.
export function oneNodeProject(name: string): Record<string, string> {
  return {
    'aqven.yaml': `apiVersion: "aqven/v1"\nkind: "Project"\nname: "${name}"\n`,
    'agents/sorter.yaml': 'apiVersion: "aqven/v1"\nkind: "Agent"\nmodel: "openrouter:openai/gpt-oss-20b"\n',
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
