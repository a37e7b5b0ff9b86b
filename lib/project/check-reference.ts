// The reference of every code `aqven check` reports (DESIGN: CLI): what it means, a minimal file that
// triggers it, and the fix. One table: `aqven explain CODE` prints an entry, docs/errors.md is
// generated from it (`npm run docs:generate`), and a test checks that each example, dropped into a
// project whose other files are fine, makes `aqven check` report its code.
import type { CheckCode } from './diagnostics';

export interface CheckReference {
  code: CheckCode;
  /** one line */
  title: string;
  means: string;
  /** a file that triggers the code in an otherwise clean project (agents/helper.yaml, flows/ask.yaml and a key are there); null: see `exampleNote` */
  example: { file: string; text: string; env?: Record<string, string | undefined>; with?: Record<string, string> } | null;
  exampleNote?: string;
  fix: string;
}

const AGENT = 'apiVersion: "aqven/v1"\nkind: "Agent"\n';
const FLOW = 'apiVersion: "aqven/v1"\nkind: "Flow"\ninput:\n  type: object\n  properties: { question: { type: string } }\nnodes:\n';
const PROVIDER = 'apiVersion: "aqven/v1"\nkind: "Provider"\n';

export const CHECK_REFERENCE: readonly CheckReference[] = [
  {
    code: 'E_FIELD',
    title: 'a field is unknown, missing, or holds a value it may not',
    means:
      'A key the file format does not have (often a typo), a required key that is missing, or a value of the wrong type or out of its range. Every file is strict: an unknown key is an error, never ignored.',
    example: { file: 'agents/helper.yaml', text: `${AGENT}model: "openrouter:openai/gpt-oss-20b"\noutput:\n  retires: 2\n` },
    fix: 'Correct the key or the value the message names; the hint lists the keys allowed there, or the values.',
  },
  {
    code: 'E_MODEL',
    title: 'a model string is not "provider:model-id"',
    means:
      'A model is written as its provider, a colon and the model id ("openrouter:openai/gpt-oss-20b"). The id may hold letters, digits and . _ - : / @ ~, and nothing a URL reads as structure.',
    example: { file: 'agents/helper.yaml', text: `${AGENT}model: "gpt-4o"\n` },
    fix: 'Write the provider before the model id, e.g. "openai:gpt-4o".',
  },
  {
    code: 'E_PROVIDER',
    title: 'a model names a provider the project does not have',
    means: 'The part of a model string before the colon must be a built-in provider (openrouter, openai, anthropic, google) or a file providers/NAME.yaml.',
    example: { file: 'agents/helper.yaml', text: `${AGENT}model: "acme:big-model"\n` },
    fix: 'Add providers/acme.yaml, or name a provider the project has.',
  },
  {
    code: 'E_OUTCOME_FALLBACK',
    title: 'an outcome policy is "fallback" but the agent has no fallback_models',
    means: 'fallback sends the same request to the next model of fallback_models; with none listed there is nowhere to go.',
    example: { file: 'agents/helper.yaml', text: `${AGENT}model: "openrouter:openai/gpt-oss-20b"\noutput:\n  on_error: "fallback"\n` },
    fix: 'Add fallback_models, or set the field to "retry" or "fail".',
  },
  {
    code: 'E_CHAIN_DUPLICATE',
    title: 'a model appears twice in an agent’s chain',
    means: 'Each model answers a node at most output.retries + 1 times; a model listed twice (as model and in fallback_models, or twice in the list) would answer more.',
    example: {
      file: 'agents/helper.yaml',
      text: `${AGENT}model: "openrouter:openai/gpt-oss-20b"\nfallback_models:\n- "openrouter:openai/gpt-oss-20b"\n`,
    },
    fix: 'Remove the repeat; to let one model answer more often, raise output.retries.',
  },
  {
    code: 'E_STRICT',
    title: 'output.strict is true where structured outputs are not available',
    means:
      'strict: true asks the provider to constrain generation to the node’s schema. The provider file must say structured_outputs: true (the built-in providers do), and its catalogue must not say structured_outputs: false for the model.',
    example: {
      file: 'agents/helper.yaml',
      text: `${AGENT}model: "local:llama3"\noutput:\n  strict: true\n`,
      with: { 'providers/local.yaml': `${PROVIDER}api: "openai"\nbase_url: "http://localhost:11434/v1"\n` },
    },
    exampleNote: 'with a providers/local.yaml that does not say structured_outputs: true',
    fix: 'Set output.strict to false (AQVEN validates the answer and repairs it), or use a provider and model with structured outputs.',
  },
  {
    code: 'E_ENV_NAME',
    title: 'a file reads an environment variable it may not',
    means:
      'api_key_env takes names ending in _API_KEY or _API_TOKEN; ${VAR} takes names ending in _BASE_URL, _HOST, _PORT or _DIR; never AQVEN_*, DATABASE_URL or PG*. A key expanded into a URL would be shown and stored.',
    example: {
      file: 'providers/local.yaml',
      text: `${PROVIDER}api: "openai"\nbase_url: "https://llm.internal/v1"\napi_key_env: "AQVEN_DATABASE_URL"\n`,
    },
    fix: 'Put the key in a variable named like LOCAL_API_KEY and name that.',
  },
  {
    code: 'E_PROVIDER_HOST',
    title: 'a provider’s base_url is on a host AQVEN_PROVIDER_HOSTS does not list',
    means: 'When AQVEN_PROVIDER_HOSTS is set, a provider request may only go to the hosts it lists; this provider could never be called.',
    example: {
      file: 'providers/local.yaml',
      text: `${PROVIDER}api: "openai"\nbase_url: "https://llm.internal/v1"\n`,
      env: { AQVEN_PROVIDER_HOSTS: 'openrouter.ai' },
    },
    fix: 'Add the host to AQVEN_PROVIDER_HOSTS, or correct the base_url.',
  },
  {
    code: 'E_FLOW_AGENT',
    title: 'a node names an agent the project does not have',
    means: 'A node’s agent is the NAME of a file agents/NAME.yaml.',
    example: { file: 'flows/ask.yaml', text: `${FLOW}  answer:\n    agent: "nobody"\n    prompt: "hi"\n` },
    fix: 'Name an existing agent, or add agents/nobody.yaml.',
  },
  {
    code: 'E_FLOW_NEEDS',
    title: 'a node needs or routes to a node the flow does not have, or the needs form a cycle',
    means: 'needs and on_fail name other nodes of the same flow; a node cannot wait for itself, directly or through others.',
    example: { file: 'flows/ask.yaml', text: `${FLOW}  a:\n    agent: "helper"\n    prompt: "hi"\n    on_fail: "review"\n` },
    fix: 'Name a node of the flow, or break the cycle.',
  },
  {
    code: 'E_TEMPLATE',
    title: 'a prompt takes a value that does not exist, or is not closed',
    means: '{{ input.x }} takes a field the flow’s input schema declares; {{ nodes.id.output.x }} a field of a node the node needs.',
    example: { file: 'flows/ask.yaml', text: `${FLOW}  answer:\n    agent: "helper"\n    prompt: "Answer {{ input.topic }}"\n` },
    fix: 'Declare the field in input:, add the node to needs:, or close the {{ }}.',
  },
  {
    code: 'E_SCHEMA',
    title: 'a JSON Schema in a flow is not one',
    means: 'A flow’s input and a node’s output are JSON Schemas; an unknown type, keyword or format would make them check nothing.',
    example: {
      file: 'flows/ask.yaml',
      text: `${FLOW}  answer:\n    agent: "helper"\n    prompt: "hi"\n    output:\n      type: object\n      properties:\n        n: { type: integr }\n`,
    },
    fix: 'Correct the schema at the place the message names.',
  },
  {
    code: 'E_LIMIT',
    title: 'a file passes a size limit',
    means: 'A file is at most 128 KiB, nested at most 64 deep, with at most 100 aliases; a flow has at most 500 nodes.',
    example: null,
    exampleNote: 'a flow of 501 nodes, or a file over 128 KiB',
    fix: 'Split the file or the flow.',
  },
  {
    code: 'E_MORE',
    title: 'a file has more than 100 errors; the rest are counted, not listed',
    means: 'After 100 errors in one file, check stops listing them and says how many more there are.',
    example: null,
    exampleNote: 'a file with 101 errors',
    fix: 'Fix the errors listed and run aqven check again.',
  },
  {
    code: 'W_API_KEY',
    title: 'a provider’s key variable is not set',
    means: 'An agent calls a provider whose api_key_env names a variable this shell does not have: the provider cannot be called. A warning: the flow still compiles.',
    example: { file: 'agents/helper.yaml', text: `${AGENT}model: "openrouter:openai/gpt-oss-20b"\n`, env: { OPENROUTER_API_KEY: undefined } },
    fix: 'Export the variable before aqven run, or run with --simulate.',
  },
  {
    code: 'W_UNPRICED',
    title: 'a model’s cost would be unknown',
    means:
      'The model has no price in its provider’s catalogue and its provider states no cost with its replies (OpenRouter and xAI do): its attempts are recorded with an unknown cost, never $0.',
    example: { file: 'agents/helper.yaml', text: `${AGENT}model: "anthropic:claude-sonnet-4-5"\n`, env: { ANTHROPIC_API_KEY: 'sk-test' } },
    fix: 'Add input_per_mtok and output_per_mtok for the model under models: in its provider file.',
  },
  {
    code: 'W_SCHEMA_LIMIT',
    title: 'a node asks for more structure than the model was measured to get right',
    means:
      'aqven limits MODEL measured the nesting depth, list length or enum size where the model stops answering a shape right on the first try; this node’s output schema asks for more.',
    example: null,
    exampleNote: 'needs a measurement: aqven limits MODEL, then a node whose schema is deeper, longer or wider than what it found',
    fix: 'Flatten or shorten the schema, split the node, or use a model measured to hold it.',
  },
  {
    code: 'W_ALERT_WEBHOOK',
    title: 'alerts: is set, but no alert can be sent from here',
    means:
      'The variable alerts.webhook.url_env names is not set in this process, or does not hold an http(s) URL: the alert rules are evaluated, but nothing would reach the webhook. A warning: the flow still compiles.',
    example: {
      file: 'aqven.yaml',
      text: 'apiVersion: "aqven/v1"\nkind: "Project"\nname: "fixture"\nalerts:\n  webhook:\n    url_env: "SLACK_WEBHOOK_URL"\n',
      env: { SLACK_WEBHOOK_URL: undefined },
    },
    fix: 'Export the webhook URL under that name in every process that runs flows (aqven run, serve, worker); aqven alerts test sends a sample.',
  },
];

export function checkReference(code: string): CheckReference | null {
  return CHECK_REFERENCE.find((r) => r.code === code) ?? null;
}

/** An entry as `aqven explain` prints it and docs/errors.md shows it (markdown that reads as plain text). */
export function formatCheckReference(r: CheckReference): string {
  const lines = [`## ${r.code}`, '', `**${r.title}.**`, '', r.means, ''];
  if (r.example) {
    lines.push(`For example, \`${r.example.file}\`${r.exampleNote ? ` (${r.exampleNote})` : ''}:`, '', '```yaml', r.example.text.trimEnd(), '```', '');
  } else if (r.exampleNote) lines.push(`It appears with ${r.exampleNote}.`, '');
  lines.push(`Fix: ${r.fix}`, '');
  return lines.join('\n');
}
