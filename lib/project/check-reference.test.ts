// The reference of aqven check's codes is whole and true: every code has an entry, and each
// entry's example, in an otherwise clean project, makes aqven check report that code.
import { describe, expect, it } from 'vitest';
import { writeProject } from '@/test/helpers/fixture-project';
import { CHECK_CODES, checkProject } from './index';
import { CHECK_REFERENCE, checkReference, formatCheckReference } from './check-reference';

describe('the check reference', () => {
  it('has one entry for every code aqven check reports', () => {
    expect(CHECK_REFERENCE.map((r) => r.code).sort()).toEqual([...CHECK_CODES].sort());
    expect(checkReference('E_NOPE')).toBeNull();
  });

  it.each(CHECK_REFERENCE.filter((r) => r.example))('$code: its example makes aqven check report it', async ({ code, example }) => {
    const dir = await writeProject({ ...example!.with, [example!.file]: example!.text });
    const env = { OPENROUTER_API_KEY: 'sk-test', ...example!.env };
    const codes = (await checkProject(dir, { env })).map((d) => `${d.file} ${d.code}`);
    expect(codes).toContain(`${example!.file} ${code}`);
  });

  it('every entry without an example says when the code appears', () => {
    for (const r of CHECK_REFERENCE.filter((x) => !x.example)) expect(r.exampleNote, r.code).toBeTruthy();
  });

  it('prints an entry as a page: the code, what it means, the example and the fix', () => {
    const text = formatCheckReference(checkReference('E_MODEL')!);
    expect(text).toMatch(/^## E_MODEL\n\n\*\*a model string is not "provider:model-id"\.\*\*\n/);
    expect(text).toContain('```yaml\napiVersion: "aqven/v1"\nkind: "Agent"\nmodel: "gpt-4o"\n```');
    expect(text).toMatch(/\nFix: Write the provider before the model id/);
  });
});
