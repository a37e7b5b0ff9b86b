// Temporary pass-through; the real detectors land shortly (DESIGN §9).
export interface RedactMessage {
  role: string;
  content: string;
}

export interface RedactOptions {
  extraPatterns?: RegExp[];
  placeholder?: string;
}

export function redact(text: string): string {
  return text;
}

export function redactText(text: string, _opts: RedactOptions = {}): string {
  return redact(text);
}

export function redactMessages<T extends RedactMessage>(messages: T[], opts: RedactOptions = {}): T[] {
  return messages.map((m) => ({ ...m, content: redactText(m.content, opts) }));
}
