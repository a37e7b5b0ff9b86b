// Prompt templates: `{{ input.x }}` and `{{ nodes.<id>.output.y }}` (DESIGN: "Project files"). Paths are
// dot-separated (a numeric segment indexes an array); whitespace inside the braces is allowed.
// A string renders as itself, anything else as JSON.

export interface TemplateRef {
  /** the whole reference as written, e.g. "{{ input.ticket }}" */
  raw: string;
  /** e.g. ["input", "ticket"] */
  path: string[];
  /** offset of the reference in the template */
  start: number;
}

export interface TemplateSyntaxError {
  raw: string;
  start: number;
  message: string;
}

export interface TemplateScan {
  refs: TemplateRef[];
  errors: TemplateSyntaxError[];
}

export interface TemplateContext {
  input: unknown;
  nodes: Record<string, { output: unknown }>;
}

const SEGMENT = /^[A-Za-z0-9_-]+$/;

/** Every `{{ … }}` of a template, parsed; bad syntax is reported, not thrown. */
export function templateRefs(template: string): TemplateScan {
  const refs: TemplateRef[] = [];
  const errors: TemplateSyntaxError[] = [];
  let i = 0;
  // one pass: the "}}" found for one "{{" serves every "{{" before it (100,000 unclosed "{{"
  // must not search to the end of the template 100,000 times)
  let close = -2;
  for (;;) {
    const open = template.indexOf('{{', i);
    if (open < 0) break;
    if (close !== -1 && close < open + 2) close = template.indexOf('}}', open + 2);
    const nextOpen = template.indexOf('{{', open + 2);
    if (close < 0 || (nextOpen >= 0 && nextOpen < close)) {
      errors.push({ raw: template.slice(open, open + 2), start: open, message: '"{{" is never closed with "}}"' });
      i = open + 2;
      continue;
    }
    const raw = template.slice(open, close + 2);
    const inner = template.slice(open + 2, close).trim();
    const path = inner.split('.');
    if (inner === '') {
      errors.push({ raw, start: open, message: `empty reference ${raw}` });
    } else if (!path.every((s) => SEGMENT.test(s))) {
      errors.push({ raw, start: open, message: `${raw} is not a dot path like {{ input.ticket }}` });
    } else {
      refs.push({ raw, path, start: open });
    }
    i = close + 2;
  }
  return { refs, errors };
}

function lookup(ctx: TemplateContext, path: string[]): unknown {
  let value: unknown = ctx;
  for (const seg of path) {
    if (value === null || typeof value !== 'object') return undefined;
    value = Array.isArray(value) ? value[Number(seg)] : Object.hasOwn(value, seg) ? (value as Record<string, unknown>)[seg] : undefined;
  }
  return value;
}

function show(value: unknown): string {
  if (value === undefined) return '';
  if (typeof value === 'string') return value;
  return JSON.stringify(value);
}

/** Replaces each valid reference by its value; text that is not a valid reference is kept. */
export function renderTemplate(template: string, ctx: TemplateContext): string {
  const { refs } = templateRefs(template);
  let out = '';
  let last = 0;
  for (const ref of refs) {
    out += template.slice(last, ref.start) + show(lookup(ctx, ref.path));
    last = ref.start + ref.raw.length;
  }
  return out + template.slice(last);
}
